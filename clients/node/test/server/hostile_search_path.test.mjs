// A hostile public schema (issue 33): a role with no grants fills public (writable by all, as on
// PostgreSQL 14) with look-alikes of the operators, functions, types and relations the client's
// statements use (clients/hostile_public.sql). Writers with the default search_path, and with
// one that puts public before pg_catalog, acquire, renew and release through Registry: the
// window the client believes is exactly the server's at every step, and no look-alike ran.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { Registry } from '../../dist/index.js';
import { config, freshDatabase, skip } from './helpers.mjs';

const HOSTILE = readFileSync(new URL('../../../hostile_public.sql', import.meta.url), 'utf8');
const DB = 'node_hostile_path';

describe('a hostile public schema', { skip }, () => {
  let admin;
  before(async () => {
    await freshDatabase(DB); // the extension in public, CREATE EXTENSION's default
    admin = new pg.Client(config(DB));
    await admin.connect();
    await admin.query(HOSTILE);
  });
  after(async () => admin && admin.end());

  const hostileCalls = async () => {
    const { rows: [c] } = await admin.query(
      'SELECT (CASE WHEN is_called THEN last_value ELSE 0 END)::pg_catalog.int4 AS n FROM public.hostile_calls');
    const { rows } = await admin.query('SELECT what FROM public.hostile_ran');
    return { calls: c.n, ran: rows.map((r) => r.what) };
  };

  // The server's window of a grant in id-time (idgen_registry_grant), and its epoch.
  const serverWindow = async (grantId) => (await admin.query(
    `SELECT lo::pg_catalog.text AS lo, hi::pg_catalog.text AS hi, epoch_ms::pg_catalog.text AS epoch_ms
       FROM public.idgen_registry_grant WHERE grant_id OPERATOR(pg_catalog.=) $1::pg_catalog.int8`,
    [grantId])).rows[0];

  const assertServers = async (g, what) => {
    const w = await serverWindow(g.grantId);
    const lo = Number(w.lo);
    const hi = Number(w.hi);
    assert.equal(g.epochMs, w.epoch_ms === null ? null : Number(w.epoch_ms), what);
    assert.deepEqual([g.lo, g.hi], [lo, hi], what);
    const us = g.kind === 'snowflake'
      ? [(lo + g.epochMs) * 1000, (hi + g.epochMs) * 1000]
      : [lo * 1e6, hi * 1e6];
    assert.deepEqual([g.loUs, g.hiUs], us, what);
  };

  for (const path of ['default', 'public,pg_catalog']) {
    test(`search_path ${path}: the client's windows are the server's, no look-alike ran`, async () => {
      const pool = new pg.Pool({
        ...config(DB), max: 2, ...(path === 'default' ? {} : { options: `-c search_path=${path}` }),
      });
      try {
        const { rows: [sp] } = await pool.query('SHOW search_path');
        assert.equal(sp.search_path, path === 'default' ? '"$user", public' : path);
        const reg = new Registry(pool, { writer: `node-hostile-${path}` });
        for (const kind of ['snowflake', 'xid12']) {
          const gen = kind === 'snowflake' ? await reg.snowflake({ lease: 60 }) : await reg.xid12({ lease: 60 });
          const first = gen.grant;
          await assertServers(first, `${path} ${kind} acquired`);
          for (let i = 0; i < 100; i++) await (kind === 'snowflake' ? gen.nextId() : gen.new());
          await gen.exclusive(() => gen.renewOrReplace());
          assert.equal(gen.grant.grantId, first.grantId);
          await assertServers(gen.grant, `${path} ${kind} renewed`);
        }
        await reg.close();
        const { rows } = await admin.query(
          `SELECT pg_catalog.count(*)::pg_catalog.int4 AS n FROM public.idgen_grants
            WHERE writer OPERATOR(pg_catalog.=) $1::pg_catalog.text AND released_at IS NULL`,
          [`node-hostile-${path}`]);
        assert.equal(rows[0].n, 0, 'close() released both grants');
      } finally {
        await pool.end();
      }
      assert.deepEqual(await hostileCalls(), { calls: 0, ran: [] });
    });
  }

  test('the trap is armed: the statement sent before issue 33 runs the attacker\'s operator', async () => {
    const before = (await hostileCalls()).calls;
    const c = new pg.Client(config(DB));
    await c.connect();
    try {
      await c.query('SELECT floor(extract(epoch FROM pg_catalog.now()) * 1000000)::bigint');
    } finally {
      await c.end();
    }
    const { calls, ran } = await hostileCalls();
    assert.ok(calls > before && ran.includes('*(numeric, integer)'), JSON.stringify({ calls, ran }));
  });
});
