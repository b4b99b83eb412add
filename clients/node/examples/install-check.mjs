// What a user's first program looks like: run by scripts/test_node.sh in a fresh project that
// installed the packed tarball (npm pack) and pg. Connection settings from the libpq
// environment (PGHOST, PGPORT, PGUSER, PGDATABASE).
import assert from 'node:assert/strict';
import pg from 'pg';
import { Registry, Snowflake, Xid, rapkey } from 'pg-idgen';
import { registerTypes } from 'pg-idgen/pg';

const pool = new pg.Pool({ max: 2, onConnect: registerTypes });
const client = await pool.connect();
try {
  await client.query('CREATE TEMP TABLE orders (id xid12 PRIMARY KEY DEFAULT gen_xid12(), key text)');
  const mine = Xid.new();
  await client.query('INSERT INTO orders (id, key) VALUES ($1, $2)', [mine, rapkey.build('ord', 'cn', 'sh', '1')]);
  const { rows: [made] } = await client.query('INSERT INTO orders (key) VALUES ($1) RETURNING id', ['x']);
  const { rows } = await client.query('SELECT id FROM orders WHERE id = ANY($1) ORDER BY id', [[mine, made.id]]);
  assert.ok(rows.every((r) => r.id instanceof Xid));
  assert.equal(rows.length, 2);
} finally {
  client.release();
}
const registry = new Registry(pool, { writer: 'install-check' });
const snow = await registry.snowflake();
const id = await snow.nextId();
const { rows: [w] } = await pool.query('SELECT (idgen_writer_of($1::bigint)).writer', [String(id)]);
assert.equal(w.writer, 'install-check');
await registry.close();
await pool.end();
console.log(`pg-idgen installed from its tarball works: ${Xid.new()} ${new Snowflake({ workerId: 1 }).nextId()}`);
