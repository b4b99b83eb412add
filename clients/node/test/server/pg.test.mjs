// node-postgres: registerTypes, parameters, arrays, NULL, bad input, binary mode, the Pool
// form, server-made and package-made ids in one table, the server's decoders against the
// package's, and keyset pagination through the whole big table.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { Snowflake, Xid, XidGenerator, rapkey, snowflakeParts } from '../../dist/index.js';
import { BINARY_MESSAGE, parseXid12Array, registerTypes } from '../../dist/pg.js';
import { bigTable, config, freshDatabase, ROWS, skip } from './helpers.mjs';

describe('node-postgres', { skip }, () => {
  let client;
  before(async () => {
    await freshDatabase('node_pg');
    await freshDatabase('node_pg_ext', { schema: 'ext' });
    client = new pg.Client(config('node_pg'));
    await client.connect();
    await client.query('SET search_path = pg_catalog'); // the lookup does not need it
    const info = await registerTypes(client);
    assert.equal(info.schema, 'public');
    await client.query('RESET search_path');
  });
  after(async () => client && client.end());

  test('without registration an xid12 is text and xid12[] is its literal', async () => {
    const raw = new pg.Client(config('node_pg'));
    await raw.connect();
    const { rows } = await raw.query("SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS id, ARRAY['9m4e2mr0ui3e8a215n4g'::xid12] AS ids");
    assert.equal(rows[0].id, '9m4e2mr0ui3e8a215n4g');
    assert.equal(rows[0].ids, '{9m4e2mr0ui3e8a215n4g}');
    await raw.end();
  });

  test('round trip: byte-exact for arbitrary ids, both ways', async () => {
    const bytes = Array.from({ length: 300 }, () => randomBytes(12));
    const { rows } = await client.query('SELECT b, b::xid12 AS id FROM unnest($1::bytea[]) b', [bytes]);
    assert.equal(rows.length, 300);
    for (const { b, id } of rows) {
      assert.ok(id instanceof Xid);
      assert.ok(id.equals(Xid.fromBytes(b)));
      assert.deepEqual(Buffer.from(id.bytes), b);
    }
    const ids = rows.map((r) => r.id);
    const back = await client.query('SELECT x::bytea AS b FROM unnest($1::xid12[]) WITH ORDINALITY AS u(x, o) ORDER BY o', [ids]);
    assert.deepEqual(back.rows.map((r) => r.b), bytes);
    // one Xid, a string, a 12-byte Buffer: each binds as an xid12
    for (const v of [ids[0], ids[0].toString(), Buffer.from(ids[0].bytes)]) {
      const r = await client.query('SELECT $1::xid12 AS id, pg_typeof($1::xid12)::text AS t', [v]);
      assert.ok(r.rows[0].id.equals(ids[0]));
    }
  });

  test('arrays: xid12[] to arrays, NULL elements, two dimensions, empty, lower bounds', async () => {
    const { rows } = await client.query(`
      SELECT ARRAY['9m4e2mr0ui3e8a215n4g', NULL, '00000000000000000000']::xid12[] AS a,
             '{{9m4e2mr0ui3e8a215n4g,NULL},{NULL,00000000000000000000}}'::xid12[] AS b,
             '{}'::xid12[] AS c, '[0:1]={9m4e2mr0ui3e8a215n4g,00000000000000000000}'::xid12[] AS d,
             NULL::xid12[] AS e, NULL::xid12 AS f`);
    const [{ a, b, c, d, e, f }] = rows;
    assert.deepEqual(a.map((x) => x && String(x)), ['9m4e2mr0ui3e8a215n4g', null, '00000000000000000000']);
    assert.ok(a[0] instanceof Xid);
    assert.deepEqual(b.map((r) => r.map((x) => x && String(x))), [['9m4e2mr0ui3e8a215n4g', null], [null, '00000000000000000000']]);
    assert.deepEqual(c, []);
    assert.deepEqual(d.map(String), ['9m4e2mr0ui3e8a215n4g', '00000000000000000000']);
    assert.equal(e, null);
    assert.equal(f, null);
    assert.deepEqual(parseXid12Array('{"9m4e2mr0ui3e8a215n4g"}', String), ['9m4e2mr0ui3e8a215n4g']);
  });

  test('parameters: WHERE id > $1 and = ANY($1) with Xid values; a text-typed parameter is the trap', async () => {
    await client.query(`CREATE TABLE t (id xid12 PRIMARY KEY, n int);
      INSERT INTO t SELECT gen_xid12(timestamptz '2026-03-01' + g * interval '1 minute'), g FROM generate_series(1, 50) g`);
    const ids = (await client.query('SELECT id FROM t ORDER BY id')).rows.map((r) => r.id);
    const gt = await client.query('SELECT n FROM t WHERE id > $1 ORDER BY id', [ids[44]]);
    assert.deepEqual(gt.rows.map((r) => r.n), [46, 47, 48, 49, 50]);
    const any = await client.query('SELECT n FROM t WHERE id = ANY($1) ORDER BY id', [[ids[1], ids[3], Xid.minFor(new Date())]]);
    assert.deepEqual(any.rows.map((r) => r.n), [2, 4]);
    const eq = await client.query('SELECT n FROM t WHERE id = $1', [ids[9]]);
    assert.equal(eq.rows[0].n, 10);
    await assert.rejects(client.query('SELECT n FROM t WHERE id = $1::varchar', [ids[9]]),
      /operator does not exist: xid12 = character varying/);
  });

  test('bad input: the server error names the value (22P02); the package error too', async () => {
    await assert.rejects(client.query('SELECT $1::xid12', ['9m4e2mr0ui3e8a215n4h']),
      (e) => e.code === '22P02' && /invalid input syntax for type xid12: "9m4e2mr0ui3e8a215n4h"/.test(e.message));
    await assert.rejects(client.query('SELECT $1::xid12', [Buffer.alloc(11)]), (e) => e.code === '22P03');
    assert.throws(() => Xid.parse('9m4e2mr0ui3e8a215n4h'), /invalid input syntax for type xid12: "9m4e2mr0ui3e8a215n4h": The last character must be 0 or g/);
  });

  test('binary results: a clear error, never a corrupt value', async () => {
    for (const text of ['SELECT $1::xid12 AS id', 'SELECT ARRAY[$1::xid12] AS id']) {
      await assert.rejects(client.query({ text, values: ['9m4e2mr0ui3e8a215n4g'], binary: true }),
        (e) => e.message === BINARY_MESSAGE);
    }
    // other columns still come back in binary
    const r = await client.query({ text: 'SELECT $1::int4 AS n', values: [7], binary: true });
    assert.equal(r.rows[0].n, 7);
    // the connection is still usable
    assert.ok((await client.query("SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS id")).rows[0].id instanceof Xid);
  });

  test("xid12As: 'string'", async () => {
    const c = new pg.Client(config('node_pg'));
    await c.connect();
    await registerTypes(c, { xid12As: 'string' });
    const { rows } = await c.query("SELECT '9M4E2MR0UI3E8A215N4G'::xid12 AS id, ARRAY[NULL, '9m4e2mr0ui3e8a215n4g'::xid12] AS ids");
    assert.equal(rows[0].id, '9m4e2mr0ui3e8a215n4g');
    assert.deepEqual(rows[0].ids, [null, '9m4e2mr0ui3e8a215n4g']);
    await c.end();
  });

  test('a database without the extension: registerTypes says so', async () => {
    await freshDatabase('node_pg_plain', { extension: false });
    const c = new pg.Client(config('node_pg_plain'));
    await c.connect();
    await assert.rejects(registerTypes(c), /pg_idgen extension is not installed in this database/);
    await c.end();
  });

  test('a Pool with onConnect: registerTypes, the extension in a schema outside search_path', async () => {
    const pool = new pg.Pool({ ...config('node_pg_ext'), max: 3, onConnect: registerTypes });
    try {
      const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
      for (const c of clients) {
        const { rows } = await c.query('SELECT ext.gen_xid12() AS id, ARRAY[ext.gen_xid12()] AS ids, current_setting($1) AS sp', ['search_path']);
        assert.ok(rows[0].id instanceof Xid && rows[0].ids[0] instanceof Xid);
        assert.doesNotMatch(rows[0].sp, /ext/);
        c.release();
      }
      const { rows } = await pool.query('SELECT $1::ext.xid12 AS id', [Xid.parse('9m4e2mr0ui3e8a215n4g')]);
      assert.equal(String(rows[0].id), '9m4e2mr0ui3e8a215n4g');
    } finally {
      await pool.end();
    }
  });

  test('server-made and package-made ids in one table; the server decodes the package ids', async () => {
    const gen = new XidGenerator({ machine: 0xabcdef, pid: 4242, counterStart: 100 });
    await client.query('CREATE TABLE mixed (id xid12 PRIMARY KEY DEFAULT gen_xid12(), src text)');
    for (let i = 0; i < 200; i++) {
      await client.query('INSERT INTO mixed (src) VALUES ($1)', ['server']);
      await client.query('INSERT INTO mixed (id, src) VALUES ($1, $2)', [i % 2 ? Xid.new() : gen.new(), 'package']);
    }
    const { rows } = await client.query(`SELECT id, src, extract(epoch FROM xid12_time(id))::bigint AS t,
        encode(xid12_machine(id), 'hex') AS m, xid12_pid(id) AS p, xid12_counter(id) AS c FROM mixed ORDER BY id`);
    assert.equal(rows.length, 400);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      assert.equal(r.id.unixSeconds, Number(r.t));
      assert.equal(Buffer.from(r.id.machine).toString('hex'), r.m);
      assert.equal(r.id.pid, r.p);
      assert.equal(r.id.counter, r.c);
      if (i) assert.ok(rows[i - 1].id < r.id, 'server order = package order');
    }
    // minFor / maxFor agree with xid12_min / xid12_max
    const d = new Date('2026-05-06T07:08:09.999Z');
    const mm = await client.query('SELECT xid12_min($1) AS lo, xid12_max($1) AS hi', [d]);
    assert.ok(mm.rows[0].lo.equals(Xid.minFor(d)) && mm.rows[0].hi.equals(Xid.maxFor(d)));
  });

  test('Snowflake ids and rapkeys: the server and the package agree', async () => {
    const g = new Snowflake({ workerId: 777 });
    const ids = Array.from({ length: 100 }, () => g.nextId());
    const { rows } = await client.query(`SELECT id::text, snowflake_worker(id) AS w, snowflake_sequence(id) AS s,
        (extract(epoch FROM snowflake_time(id)) * 1000)::bigint::text AS ms FROM unnest($1::bigint[]) id`, [ids.map(String)]);
    rows.forEach((r, i) => {
      assert.equal(r.id, String(ids[i]));
      assert.equal(r.w, 777);
      assert.equal(r.s, snowflakeParts(ids[i]).sequence);
      assert.equal(Number(r.ms), g.unixMs(ids[i]));
    });
    // rapkey: check characters of random bodies, validity of mutated keys, prefix ranges
    const bodies = Array.from({ length: 300 }, (_, i) => `t${String.fromCharCode(97 + (i % 26))}.${randomBytes(4).toString('hex')}.${i}`);
    const cc = await client.query('SELECT rapkey_check_char(b) AS c FROM unnest($1::text[]) b', [bodies]);
    cc.rows.forEach((r, i) => assert.equal(r.c, rapkey.checkChar(bodies[i])));
    const keys = bodies.map((b, i) => (i % 3 ? b + '-' + rapkey.checkChar(b) : b.replace('.', i % 2 ? '.' : '..') + '-x'));
    const v = await client.query('SELECT rapkey_is_valid(k) AS ok FROM unnest($1::text[]) k', [keys]);
    v.rows.forEach((r, i) => assert.equal(r.ok, rapkey.isValid(keys[i]), keys[i]));
    const pr = await client.query("SELECT rapkey_prefix_lo('ord.cn.sh') AS lo, rapkey_prefix_hi('ord.cn.sh') AS hi");
    assert.deepEqual([pr.rows[0].lo, pr.rows[0].hi], rapkey.prefixRange('ord.cn.sh'));
    await assert.rejects(client.query('SELECT $1::rapkey', ['ord.cn.sh.202407.8842-3']), (e) => e.code === '23514');
    assert.throws(() => rapkey.validate('ord.cn.sh.202407.8842-3'), /expected '2', found '3'/);
  });

  test(`keyset pagination through all ${ROWS} rows gives the server's order`, async () => {
    const all = await bigTable(client);
    assert.equal(all.length, ROWS);
    const seen = [];
    let cursor = null;
    for (;;) {
      const { rows } = cursor === null
        ? await client.query('SELECT id FROM items ORDER BY id LIMIT $1', [1000])
        : await client.query('SELECT id FROM items WHERE id > $1 ORDER BY id LIMIT $2', [cursor, 1000]);
      if (rows.length === 0) break;
      for (const r of rows) seen.push(r.id.toString());
      cursor = rows.at(-1).id;
    }
    assert.equal(seen.length, all.length);
    assert.deepEqual(seen, all);
    const sorted = [...seen].sort();
    assert.deepEqual(sorted, all, 'JavaScript string order = server order');
  });
});
