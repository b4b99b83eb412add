// Drizzle and Kysely over node-postgres (a Pool with onConnect: registerTypes): DDL naming the
// type right when the extension lives outside public (drizzle-kit's migration, Kysely's schema
// builder), values as Xid, checked rapkeys, = ANY, and keyset pagination through the big table.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { asc, eq, inArray } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { integer, pgTable } from 'drizzle-orm/pg-core';
import { generateDrizzleJson, generateMigration } from 'drizzle-kit/api';
import { Kysely, PostgresDialect } from 'kysely';
import { Xid, rapkey as rk } from '../../dist/index.js';
import { registerTypes } from '../../dist/pg.js';
import { afterXid, genXid12, rapkey, xid12 } from '../../dist/drizzle.js';
import { anyXid, genXid12 as kGenXid12, rapkeyDataType, xid12DataType } from '../../dist/kysely.js';
import { bigTable, config, freshDatabase, ROWS, skip } from './helpers.mjs';

describe('Drizzle', { skip }, () => {
  let pool;
  let db;
  const orders = pgTable('orders', {
    id: xid12('id', { schema: 'ext' }).primaryKey().default(genXid12('ext')),
    key: rapkey('order_key', { schema: 'ext' }).unique(),
    n: integer('n').notNull(),
  });
  const items = pgTable('items', { id: xid12('id').primaryKey(), n: integer('n').notNull() });

  before(async () => {
    await freshDatabase('node_drizzle', { schema: 'ext' });
    pool = new pg.Pool({ ...config('node_drizzle'), max: 2, onConnect: registerTypes });
    db = drizzle(pool);
  });
  after(async () => pool && pool.end());

  test("drizzle-kit's migration names \"ext\".\"xid12\" and runs without ext on search_path", async () => {
    const statements = await generateMigration(generateDrizzleJson({}), generateDrizzleJson({ orders }));
    const ddl = statements.join('\n');
    assert.match(ddl, /"id" "ext"\."xid12" PRIMARY KEY DEFAULT "ext"\.gen_xid12\(\)/);
    assert.match(ddl, /"order_key" "ext"\."rapkey"/);
    // generate run again over the same tables: nothing to do
    assert.deepEqual(await generateMigration(generateDrizzleJson({ orders }), generateDrizzleJson({ orders })), []);
    const c = await pool.connect();
    try {
      assert.doesNotMatch((await c.query('SHOW search_path')).rows[0].search_path, /ext/);
      for (const s of statements) await c.query(s);
    } finally {
      c.release();
    }
  });

  test('insert and select Xid values, defaults, checked rapkeys, = ANY', async () => {
    // operators of the extension's type need its schema on search_path (or OPERATOR(ext.=))
    await pool.query('ALTER DATABASE node_drizzle SET search_path = public, ext');
    await pool.end();
    pool = new pg.Pool({ ...config('node_drizzle'), max: 2, onConnect: registerTypes });
    db = drizzle(pool);
    const mine = Xid.new();
    await db.insert(orders).values({ id: mine, key: rk.build('ord', 'cn', 'sh', '1'), n: 1 });
    const [made] = await db.insert(orders).values({ key: rk.build('ord', 'cn', 'sh', '2'), n: 2 }).returning();
    assert.ok(made.id instanceof Xid && mine < made.id);
    const [one] = await db.select().from(orders).where(eq(orders.id, mine));
    assert.ok(one.id.equals(mine));
    assert.equal(one.key, 'ord.cn.sh.1-' + rk.checkChar('ord.cn.sh.1'));
    const both = await db.select().from(orders).where(inArray(orders.id, [mine, made.id])).orderBy(asc(orders.id));
    assert.deepEqual(both.map((r) => r.n), [1, 2]);
    assert.throws(() => db.insert(orders).values({ key: 'ord.cn.sh.1-0', n: 3 }).toSQL(), /invalid input syntax for type rapkey: "ord.cn.sh.1-0": Wrong check character/);
    assert.throws(() => db.select().from(orders).where(eq(orders.id, 'nope')).toSQL(), /invalid input syntax for type xid12: "nope"/);
  });

  test(`keyset pagination through all ${ROWS} rows gives the server's order`, async () => {
    const c = await pool.connect();
    const all = await bigTable(c);
    c.release();
    const seen = [];
    let cursor = null;
    for (;;) {
      const rows = await db.select({ id: items.id }).from(items).where(afterXid(items.id, cursor)).orderBy(asc(items.id)).limit(1000);
      if (rows.length === 0) break;
      for (const r of rows) seen.push(r.id.toString());
      cursor = rows.at(-1).id;
    }
    assert.deepEqual(seen, all);
  });
});

describe('Kysely', { skip }, () => {
  let db;
  before(async () => {
    await freshDatabase('node_kysely', { schema: 'ext' });
    db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ ...config('node_kysely'), max: 2, onConnect: registerTypes }) }) });
  });
  after(async () => db && db.destroy());

  test('DDL with the schema-qualified type and default, values as Xid, = ANY, pagination', async () => {
    await db.schema.createTable('orders')
      .addColumn('id', xid12DataType('ext'), (c) => c.primaryKey().defaultTo(kGenXid12('ext')))
      .addColumn('order_key', rapkeyDataType('ext'))
      .addColumn('n', 'integer', (c) => c.notNull())
      .execute();
    const mine = Xid.new();
    await db.insertInto('orders').values({ id: mine, n: 1, order_key: rk.build('usr', 'cn', '10001') }).execute();
    const made = await db.insertInto('orders').values({ n: 2 }).returning('id').executeTakeFirstOrThrow();
    assert.ok(made.id instanceof Xid);
    const [row] = await db.selectFrom('orders').selectAll().where('order_key', '=', 'usr.cn.10001-x').execute();
    assert.ok(row.id.equals(mine));
    // operators need the extension's schema on search_path
    await sqlRun(db, 'ALTER DATABASE node_kysely SET search_path = public, ext');
  });

  test(`keyset pagination through all ${ROWS} rows gives the server's order`, async () => {
    await db.destroy();
    db = new Kysely({ dialect: new PostgresDialect({ pool: new pg.Pool({ ...config('node_kysely'), max: 2, onConnect: registerTypes }) }) });
    const c = new pg.Client(config('node_kysely'));
    await c.connect();
    const all = await bigTable(c);
    await c.end();
    const seen = [];
    let cursor = null;
    for (;;) {
      let q = db.selectFrom('items').select('id').orderBy('id').limit(1000);
      if (cursor !== null) q = q.where('id', '>', cursor);
      const rows = await q.execute();
      if (rows.length === 0) break;
      for (const r of rows) seen.push(r.id.toString());
      cursor = rows.at(-1).id;
    }
    assert.deepEqual(seen, all);
    const some = await db.selectFrom('items').select('n').where('id', '=', anyXid([all[5], Xid.parse(all[9])])).orderBy('id').execute();
    assert.equal(some.length, 2);
  });
});

async function sqlRun(db, text) {
  const { sql } = await import('kysely');
  await sql.raw(text).execute(db);
}
