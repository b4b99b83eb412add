// registerTypes in a database without the extension: by default it rejects with
// ExtensionMissingError; with { ifMissing: 'skip' } it registers nothing and resolves to null,
// so the Pool whose onConnect registers the types runs the migration that creates it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { ExtensionMissingError, Xid } from '../../dist/index.js';
import { registerTypes } from '../../dist/pg.js';
import { config, freshDatabase, skip } from './helpers.mjs';

describe('registerTypes without the extension', { skip }, () => {
  test("a Pool with ifMissing: 'skip' creates the extension; its next connections register", async () => {
    await freshDatabase('node_missing', { extension: false });
    const found = [];
    const onConnect = async (c) => found.push(await registerTypes(c, { ifMissing: 'skip' }));
    const pool = new pg.Pool({ ...config('node_missing'), max: 1, onConnect });
    try {
      const c = await pool.connect();
      await assert.rejects(registerTypes(c), ExtensionMissingError);
      await c.query('CREATE EXTENSION pg_idgen');
      // the connection opened before the extension existed gives text
      assert.equal((await c.query("SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS id")).rows[0].id, '9m4e2mr0ui3e8a215n4g');
      c.release(true); // closes it: the next connection registers
      const { rows } = await pool.query("SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS id");
      assert.ok(rows[0].id instanceof Xid);
      assert.equal(found[0], null);
      assert.equal(found[1].schema, 'public');
    } finally {
      await pool.end();
    }
  });
});
