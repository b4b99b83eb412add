// The node-pg recipe of pg_idgen's README ("From your application"), run against a real server
// by scripts/test_recipes.sh. Connection settings come from the libpq environment (PGHOST,
// PGPORT, PGUSER, PGDATABASE). Exits non-zero when a check fails.
'use strict';
const assert = require('node:assert/strict');
const pg = require('pg');

// --- recipe: begin ---
// Looks up xid12 and xid12[] by the extension's schema (not search_path) and makes node-pg
// return an xid12 as its 20-character text and an xid12[] as an array of those. Binary
// results fail loudly: node-pg decodes every field as UTF-8 first, which corrupts the bytes.
async function registerXid12(client) {
  const { rows } = await client.query(`
    SELECT t.oid, t.typarray
      FROM pg_catalog.pg_type t
      JOIN pg_catalog.pg_extension e ON e.extnamespace = t.typnamespace
     WHERE e.extname = 'pg_idgen' AND t.typname = 'xid12'`);
  if (rows.length !== 1) throw new Error('the pg_idgen extension is not installed in this database');
  const { oid, typarray } = rows[0];
  const textArray = client.getTypeParser(1009, 'text'); // text[]: xid12 text never needs quoting
  client.setTypeParser(oid, 'text', (text) => text);
  client.setTypeParser(typarray, 'text', textArray);
  for (const type of [oid, typarray]) {
    client.setTypeParser(type, 'binary', () => {
      throw new Error('xid12 in binary mode: node-pg corrupts the 12 bytes; query in text mode');
    });
  }
}
// --- recipe: end ---

// --- recipe: begin ---
// One id: bind its text. Several: bind a JavaScript array (node-pg sends an array literal,
// which the server reads as xid12[]).
async function orderN(client, id) {
  const { rows } = await client.query('SELECT n FROM orders WHERE id = $1', [id]);
  return rows.length ? rows[0].n : undefined;
}

async function ordersByIds(client, ids) {
  const { rows } = await client.query('SELECT id, n FROM orders WHERE id = ANY($1) ORDER BY id', [ids]);
  return rows;
}

// Keyset pagination: the first page has no bound, each next page starts after the last id.
async function* pagesOfOrders(client, size) {
  let cursor = null;
  for (;;) {
    const { rows } = cursor === null
      ? await client.query('SELECT id, n FROM orders ORDER BY id LIMIT $1', [size])
      : await client.query('SELECT id, n FROM orders WHERE id > $1 ORDER BY id LIMIT $2', [cursor, size]);
    if (rows.length === 0) return;
    yield rows;
    cursor = rows[rows.length - 1].id;
  }
}
// --- recipe: end ---

// base32hex (0-9, a-v: JavaScript's radix 32) of the 20-character text to the 12 bytes, to
// check the text the driver hands out against the bytes the server stores.
function xidHex(id) {
  assert.match(id, /^[0-9a-v]{19}[0g]$/);
  let n = 0n;
  for (const c of id) n = (n << 5n) | BigInt(parseInt(c, 32));
  return (n >> 4n).toString(16).padStart(24, '0');
}

async function main() {
  // Without the registration, binary mode hands out a silently corrupted value: the 12 bytes
  // went through a UTF-8 decode. The bytes below are not valid UTF-8 (0x80-0xff).
  const raw = new pg.Client();
  await raw.connect();
  const bytes = Buffer.from('4d88e15b60f486e428412dc9', 'hex'); // the rs/xid documentation's id
  // (binary: true applies to queries with parameters: node-pg sends the others as simple queries)
  const binary = await raw.query({
    text: 'SELECT $1::bytea::xid12 AS id', values: [bytes], binary: true,
  });
  assert.equal(binary.fields[0].format, 'binary');
  const got = binary.rows[0].id;
  assert.equal(typeof got, 'string');
  assert.notDeepEqual(Buffer.from(got, 'latin1'), bytes);
  assert.notDeepEqual(Buffer.from(got, 'utf8'), bytes);
  assert.ok(got.includes('\ufffd'), 'invalid UTF-8 became U+FFFD');
  console.log(`binary mode without the recipe: 12 bytes came back as ${JSON.stringify(got)} (corrupted)`);
  // Without a parser for xid12[], an array comes back as the literal.
  const arr = await raw.query("SELECT ARRAY['9m4e2mr0ui3e8a215n4g']::xid12[] AS ids");
  assert.equal(arr.rows[0].ids, '{9m4e2mr0ui3e8a215n4g}');
  await raw.end();

  // A database without the extension: registration says so.
  const elsewhere = new pg.Client({ database: 'postgres' });
  await elsewhere.connect();
  await assert.rejects(registerXid12(elsewhere), /pg_idgen extension is not installed in this database/);
  await elsewhere.end();

  const client = new pg.Client();
  await client.connect();
  // The lookup does not depend on search_path.
  await client.query('SET search_path = pg_catalog');
  await registerXid12(client);
  await client.query('RESET search_path');

  // Byte-exact: a fixed id (rs/xid's documented example) and 300 ids of arbitrary bytes,
  // out as text through the driver and back in as a parameter.
  const fixed = await client.query(
    "SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS id, '9M4E2MR0UI3E8A215N4G'::xid12::bytea AS b");
  assert.equal(fixed.rows[0].id, '9m4e2mr0ui3e8a215n4g');
  assert.deepEqual(fixed.rows[0].b, bytes);
  assert.equal(xidHex(fixed.rows[0].id), bytes.toString('hex'));
  const arbitrary = await client.query(`
    SELECT substr(decode(md5(g::text) || md5(g::text || 'x'), 'hex'), 1, 12) AS b,
           substr(decode(md5(g::text) || md5(g::text || 'x'), 'hex'), 1, 12)::xid12 AS id
      FROM generate_series(1, 300) g`);
  for (const { b, id } of arbitrary.rows) {
    assert.equal(xidHex(id), b.toString('hex'));
    const back = await client.query('SELECT $1::xid12::bytea AS b', [id]);
    assert.deepEqual(back.rows[0].b, b);
  }
  console.log(`byte-exact round trip: ${arbitrary.rows.length + 1} ids`);

  // Binary mode with the recipe: a clear error, not a wrong id.
  await assert.rejects(
    client.query({ text: 'SELECT $1::xid12', values: ['9m4e2mr0ui3e8a215n4g'], binary: true }),
    /node-pg corrupts the 12 bytes/);
  await assert.rejects(
    client.query({ text: 'SELECT ARRAY[$1::xid12]', values: ['9m4e2mr0ui3e8a215n4g'], binary: true }),
    /node-pg corrupts the 12 bytes/);
  // A malformed id is the server's error, never a different id.
  await assert.rejects(client.query('SELECT $1::xid12', ['9m4e2mr0ui3e8a215n4h']),
    (e) => e.code === '22P02' && /invalid input syntax for type xid12/.test(e.message));

  // A table keyed by xid12: ids of 1,000 different seconds, a few arbitrary-byte ids.
  await client.query(`
    CREATE TEMP TABLE orders (id xid12 PRIMARY KEY DEFAULT gen_xid12(), n int NOT NULL);
    INSERT INTO orders (id, n)
      SELECT gen_xid12(timestamptz '2026-01-01' + g * interval '1 minute'), g
        FROM generate_series(1, 1000) g;
    INSERT INTO orders (id, n)
      SELECT substr(decode(md5(g::text) || md5(g::text || 'x'), 'hex'), 1, 12)::xid12, -g
        FROM generate_series(1, 37) g`);
  const { rows: [inserted] } = await client.query(
    'INSERT INTO orders (n) VALUES ($1) RETURNING id', [5000]);
  assert.match(inserted.id, /^[0-9a-v]{20}$/);

  assert.equal(await orderN(client, inserted.id), 5000);
  assert.equal(await orderN(client, '00000000000000000000'), undefined);
  assert.deepEqual(await ordersByIds(client, [inserted.id, '9m4e2mr0ui3e8a215n4g']), [{ id: inserted.id, n: 5000 }]);
  const agg = await client.query('SELECT array_agg(id ORDER BY id) AS ids FROM orders WHERE n < 0');
  assert.ok(Array.isArray(agg.rows[0].ids));
  assert.equal(agg.rows[0].ids.length, 37);
  assert.equal((await ordersByIds(client, agg.rows[0].ids)).length, 37);
  // A 12-byte Buffer binds as well: node-pg sends Buffers in binary format, which the server's
  // xid12 receive function reads as the 12 bytes.
  const byBuffer = await client.query('SELECT $1::xid12 AS id', [bytes]);
  assert.equal(byBuffer.rows[0].id, '9m4e2mr0ui3e8a215n4g');

  // Keyset pagination: the text of two ids orders like the ids, so JavaScript's < agrees.
  const all = (await client.query('SELECT id FROM orders ORDER BY id')).rows.map((r) => r.id);
  const pages = [];
  for await (const rows of pagesOfOrders(client, 100)) pages.push(rows);
  const paged = pages.flat().map((r) => r.id);
  assert.equal(paged.length, 1038);
  assert.deepEqual(paged, all);
  for (let i = 1; i < paged.length; i++) assert.ok(paged[i - 1] < paged[i], 'string order = id order');
  console.log(`pagination: ${pages.length} pages, ${paged.length} ids, in the server's order`);

  await client.end();
  console.log('node-pg recipe: all checks passed');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
