// Postgres.js: idgenTypes, parameters, arrays (xid12Array), NULL, bad input, the extension in
// another schema, and keyset pagination through the whole big table.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import postgres from 'postgres';
import { Xid } from '../../dist/index.js';
import { idgenTypes, xid12Array } from '../../dist/postgres.js';
import { bigTable, config, freshDatabase, ROWS, skip } from './helpers.mjs';

const options = (database) => ({ ...config(database), username: 'postgres', onnotice: () => undefined });

describe('Postgres.js', { skip }, () => {
  let sql;
  before(async () => {
    await freshDatabase('node_postgresjs', { schema: 'ext' });
    // The lookup does not need the extension's schema on search_path; operators (id > $1) do.
    sql = postgres({ ...options('node_postgresjs'), connection: { search_path: 'public, ext' },
      types: await idgenTypes(options('node_postgresjs')) });
  });
  after(async () => sql && sql.end());

  test('values come back as Xid; arrays as arrays of Xid; NULL as null', async () => {
    const [row] = await sql`SELECT ext.gen_xid12() AS id, ARRAY[ext.gen_xid12(), NULL] AS ids, NULL::ext.xid12 AS n,
      '{{9m4e2mr0ui3e8a215n4g,NULL},{NULL,00000000000000000000}}'::ext.xid12[] AS two`;
    assert.ok(row.id instanceof Xid);
    assert.ok(row.ids[0] instanceof Xid);
    assert.equal(row.ids[1], null);
    assert.equal(row.n, null);
    assert.deepEqual(row.two.map((r) => r.map((x) => x && String(x))), [['9m4e2mr0ui3e8a215n4g', null], [null, '00000000000000000000']]);
  });

  test('round trip of arbitrary bytes; Xid and string parameters; = ANY(xid12Array)', async () => {
    const bytes = Array.from({ length: 200 }, () => randomBytes(12));
    const rows = await sql`SELECT b, b::ext.xid12 AS id FROM unnest(${sql.array(bytes, 17)}::bytea[]) b`;
    for (const { b, id } of rows) assert.deepEqual(Buffer.from(id.bytes), Buffer.from(b));
    const ids = rows.map((r) => r.id);
    await sql`CREATE TABLE t (id ext.xid12 PRIMARY KEY, n int)`;
    await sql`INSERT INTO t ${sql(ids.map((id, n) => ({ id, n })))}`;
    const sorted = [...ids].sort(Xid.compare);
    const gt = await sql`SELECT id FROM t WHERE id > ${sorted[189]} ORDER BY id`;
    assert.deepEqual(gt.map((r) => String(r.id)), sorted.slice(190).map(String));
    const byString = await sql`SELECT n FROM t WHERE id = ${String(ids[5])}`;
    assert.equal(byString[0].n, 5);
    const any = await sql`SELECT n FROM t WHERE id = ANY(${xid12Array(sql, [ids[3], String(ids[7])])}) ORDER BY n`;
    assert.deepEqual(any.map((r) => r.n), [3, 7]);
    const back = await sql`SELECT ${xid12Array(sql, ids.slice(0, 3))}::ext.xid12[] AS a`;
    assert.deepEqual(back[0].a.map(String), ids.slice(0, 3).map(String));
    // a plain JavaScript array of Xid or strings binds untyped too: the server reads xid12[]
    assert.deepEqual((await sql`SELECT n FROM t WHERE id = ANY(${[ids[3], String(ids[7])]}) ORDER BY n`).map((r) => r.n), [3, 7]);
    assert.throws(() => xid12Array(postgres(), ids), /needs a Postgres.js instance made with/);
  });

  test('bad input names the value', async () => {
    // the server types the parameter xid12, so the package's serializer checks it first
    await assert.rejects(sql`SELECT ${'9m4e2mr0ui3e8a215n4h'}::ext.xid12`, /invalid input syntax for type xid12: "9m4e2mr0ui3e8a215n4h"/);
    await assert.rejects(sql`SELECT ${'9m4e2mr0ui3e8a215n4h'}::text::ext.xid12`,
      (e) => e.code === '22P02' && /invalid input syntax for type xid12: "9m4e2mr0ui3e8a215n4h"/.test(e.message));
    await assert.rejects(sql`SELECT ${sql.typed.xid12('9m4e2mr0ui3e8a215n4h')}`, /invalid input syntax for type xid12: "9m4e2mr0ui3e8a215n4h"/);
  });

  test('idgenTypes through an existing instance; a database without the extension', async () => {
    const types = await idgenTypes(sql);
    assert.equal(typeof types.xid12.to, 'number');
    await freshDatabase('node_postgresjs_plain', { extension: false });
    await assert.rejects(idgenTypes(options('node_postgresjs_plain')), /pg_idgen extension is not installed/);
  });

  test(`keyset pagination through all ${ROWS} rows gives the server's order`, async () => {
    const c = await import('pg');
    const pgc = new c.default.Client(config('node_postgresjs'));
    await pgc.connect();
    const all = await bigTable(pgc, 'ext.');
    await pgc.end();
    const seen = [];
    let cursor = null;
    for (;;) {
      const rows = cursor === null
        ? await sql`SELECT id FROM items ORDER BY id LIMIT 1000`
        : await sql`SELECT id FROM items WHERE id > ${cursor} ORDER BY id LIMIT 1000`;
      if (rows.length === 0) break;
      for (const r of rows) seen.push(r.id.toString());
      cursor = rows.at(-1).id;
    }
    assert.deepEqual(seen, all);
  });
});
