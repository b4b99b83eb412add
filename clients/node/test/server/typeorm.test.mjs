// TypeORM 0.3 with pg-idgen/typeorm: synchronize run again over xid12, rapkey and Snowflake
// tables changes nothing (no DDL, same rows, same ids), an entity declaring text over an xid12
// column stops with an error instead of dropping it, and repositories take and give Xid: 10,000
// rows from one bulk insert, read back, looked up and paged by id > cursor (TypeORM has no
// cursor pagination of its own). Bad input fails with the server's words.
// Without the helper (only the types pushed into supportedDataTypes) the same second start
// drops the rapkey column: the control that shows the test can fail.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DataSource, EntitySchema, In, MoreThan, QueryFailedError } from 'typeorm';
import { Snowflake, Xid, rapkey as rk } from '../../dist/index.js';
import { genXid12, idgenTypeorm, rapkeyColumn, snowflakeColumn, xid12Column } from '../../dist/typeorm.js';
import { HOST, PORT, freshDatabase, serverError, skip } from './helpers.mjs';

const DB = 'node_typeorm';
const ROWS = 10000;

const Order = new EntitySchema({
  name: 'Order',
  tableName: 'orders',
  columns: {
    id: { ...xid12Column({ default: genXid12() }), primary: true },
    key: rapkeyColumn({ name: 'order_key', unique: true, nullable: true }),
    ref: xid12Column({ nullable: true }),
    n: { type: 'int' },
  },
});
const Flake = new EntitySchema({
  name: 'Flake',
  tableName: 'flakes',
  columns: {
    id: { ...snowflakeColumn({ default: () => 'gen_snowflake()' }), primary: true },
    n: { type: 'int' },
  },
});
// the mistake of the issue: text over an xid12 primary key
const OrderAsText = new EntitySchema({
  name: 'Order',
  tableName: 'orders',
  columns: { ...Order.options.columns, id: { type: 'text', primary: true, default: () => 'gen_xid12()' } },
});

/** A started DataSource and the DDL it ran while starting. */
async function start(entities, { helper = true, database = DB, schema } = {}) {
  const ddl = [];
  const logger = {
    logQuery: (q) => { if (/^\s*(CREATE|ALTER|DROP|COMMENT)\b/i.test(q)) ddl.push(q); },
    logQueryError() {}, logQuerySlow() {}, logSchemaBuild() {}, logMigration() {}, log() {},
  };
  const ds = new DataSource({
    type: 'postgres', host: HOST, port: PORT, username: 'postgres', database,
    entities, synchronize: true, logging: true, logger, extra: { max: 2 },
  });
  if (helper) idgenTypeorm(ds, { schema });
  else ds.driver.supportedDataTypes.push('xid12', 'rapkey');
  try {
    await ds.initialize();
  } catch (e) {
    if (ds.isInitialized) await ds.destroy();
    e.ddl = ddl;
    throw e;
  }
  return { ds, ddl };
}

async function snapshot(ds) {
  const [o] = await ds.query(`SELECT count(*)::int AS n, count(order_key)::int AS keys,
      md5(string_agg(id::text || coalesce(order_key, '') || coalesce(ref::text, ''), ',' ORDER BY id)) AS h FROM orders`);
  const [f] = await ds.query("SELECT count(*)::int AS n, md5(string_agg(id::text, ',' ORDER BY id)) AS h FROM flakes");
  const types = await ds.query(`SELECT table_name, column_name, data_type, domain_name FROM information_schema.columns
      WHERE table_schema = 'public' ORDER BY 1, 2`);
  return { o, f, types };
}

describe('TypeORM', { skip }, () => {
  let ds;
  let first;
  before(async () => {
    await freshDatabase(DB);
    ({ ds } = await start([Order, Flake]));
    // one bulk INSERT through the repository; the ids come from the column's DEFAULT gen_xid12()
    await ds.getRepository(Order).insert(Array.from({ length: ROWS }, (_, i) => ({ key: rk.build('ord', 'cn', String(i)), ref: Xid.new(), n: i })));
    const flakes = new Snowflake({ workerId: 7 });
    await ds.getRepository(Flake).insert(Array.from({ length: 1000 }, (_, i) => ({ id: flakes.nextId(), n: i })));
    first = await snapshot(ds);
    await ds.destroy();
  });
  after(async () => ds?.isInitialized && ds.destroy());

  test('the first start made xid12, rapkey and bigint columns', () => {
    const t = Object.fromEntries(first.types.map((r) => [`${r.table_name}.${r.column_name}`, r.domain_name ?? r.data_type]));
    assert.equal(t['orders.id'], 'USER-DEFINED');
    assert.equal(t['orders.order_key'], 'rapkey');
    assert.equal(t['orders.ref'], 'USER-DEFINED');
    assert.equal(t['flakes.id'], 'bigint');
    assert.equal(first.o.n, ROWS);
    assert.equal(first.o.keys, ROWS);
    assert.equal(first.f.n, 1000);
  });

  test('synchronize again: no DDL, the same rows and ids', async () => {
    for (let i = 0; i < 2; i++) {
      const started = await start([Order, Flake]);
      ds = started.ds;
      assert.deepEqual(started.ddl, []);
      assert.deepEqual(await snapshot(ds), first);
      await ds.destroy();
    }
  });

  test(`${ROWS} rows read back as Xid; findOneBy a bound Xid; MoreThan pages: every row once, the server's order`, async () => {
    ({ ds } = await start([Order, Flake]));
    const all = (await ds.query('SELECT id::text AS id FROM orders ORDER BY id')).map((r) => r.id);
    const repo = ds.getRepository(Order);
    const rows = await repo.find({ order: { id: 'ASC' } });
    assert.equal(rows.length, ROWS);
    assert.ok(rows.every((o) => o.id instanceof Xid && o.ref instanceof Xid));
    assert.deepEqual(rows.map((o) => o.id.toString()), all);
    const one = await repo.findOneBy({ id: Xid.parse(all[4321]) });
    assert.equal(one.id.toString(), all[4321]);
    assert.equal(one.key, rk.build('ord', 'cn', String(one.n)));
    // TypeORM has no cursor pagination of its own: keyset pages with MoreThan
    const seen = [];
    let cursor = null;
    for (;;) {
      const page = await repo.find({ where: cursor ? { id: MoreThan(cursor) } : {}, order: { id: 'ASC' }, take: 1000 });
      if (page.length === 0) break;
      seen.push(...page.map((o) => o.id.toString()));
      cursor = page.at(-1).id;
    }
    assert.deepEqual(seen, all);
    await ds.destroy();
  });

  test("a bad id or key from user input: the error says the server's words", async () => {
    ({ ds } = await start([Order, Flake]));
    const repo = ds.getRepository(Order);
    // the column's transformer parses a string id before TypeORM sends it (XidError)
    const badId = await serverError(DB, "SELECT 'nope'::xid12");
    await assert.rejects(repo.findOneBy({ id: 'nope' }), (e) => {
      assert.equal(e.name, 'XidError');
      assert.equal(e.message, `${badId.message}: ${badId.detail}`);
      return true;
    });
    // a rapkey is the server's to check: TypeORM's QueryFailedError
    const badKey = await serverError(DB, "SELECT 'ord.cn.1-0'::rapkey");
    await assert.rejects(repo.insert({ key: 'ord.cn.1-0', n: 0 }), (e) => {
      assert.ok(e instanceof QueryFailedError, e.constructor.name);
      assert.equal(e.message, badKey.message);
      assert.equal(e.driverError.detail, badKey.detail);
      return true;
    });
    await ds.destroy();
  });

  test('text declared over an xid12 column: synchronize stops, nothing dropped', async () => {
    await assert.rejects(start([OrderAsText, Flake]), (e) => {
      assert.match(e.message, /column orders\.id is xid12 in the database but the entity declares text/);
      assert.deepEqual(e.ddl, []);
      return true;
    });
    ({ ds } = await start([Order, Flake]));
    assert.deepEqual(await snapshot(ds), first);
  });

  test('repositories take and give Xid: findOneBy, MoreThan, In, save with the default', async () => {
    const repo = ds.getRepository(Order);
    const saved = await repo.save({ key: rk.build('ord', 'de', '1'), n: -1 });
    assert.ok(saved.id instanceof Xid, `id ${saved.id}`);
    const found = await repo.findOneBy({ id: saved.id });
    assert.ok(found.id instanceof Xid && found.id.equals(saved.id));
    assert.ok(found.ref === null);
    const page = await repo.find({ where: { id: MoreThan(saved.id) }, order: { id: 'ASC' }, take: 10 });
    assert.equal(page.length, 0);
    const some = await repo.find({ order: { id: 'ASC' }, take: 3 });
    assert.ok(some.every((o) => o.id instanceof Xid && o.ref instanceof Xid));
    const again = await repo.find({ where: { id: In(some.map((o) => o.id)) }, order: { id: 'ASC' } });
    assert.deepEqual(again.map((o) => o.id.toString()), some.map((o) => o.id.toString()));
    const next = await repo.find({ where: { id: MoreThan(some[0].id) }, order: { id: 'ASC' }, take: 2 });
    assert.deepEqual(next.map((o) => o.id.toString()), some.slice(1).map((o) => o.id.toString()));
    const flake = await ds.getRepository(Flake).findOne({ where: {}, order: { id: 'ASC' } });
    assert.equal(typeof flake.id, 'bigint');
    await ds.destroy();
  });

  test('the extension in a schema outside search_path: the second start runs no DDL', async () => {
    await freshDatabase('node_typeorm_ext', { schema: 'ext' });
    const Ext = new EntitySchema({
      name: 'Order',
      tableName: 'orders',
      columns: {
        id: { ...xid12Column({ schema: 'ext', default: genXid12('ext') }), primary: true },
        key: rapkeyColumn({ schema: 'ext', name: 'order_key', unique: true, nullable: true }),
        n: { type: 'int' },
      },
    });
    const starts = [];
    for (let i = 0; i < 2; i++) {
      const started = await start([Ext], { database: 'node_typeorm_ext', schema: 'ext' });
      starts.push(started.ddl);
      if (i === 0) await started.ds.query("INSERT INTO orders (order_key, n) VALUES ('ord.cn.1-' || ext.rapkey_check_char('ord.cn.1'), 1)");
      await started.ds.destroy();
    }
    assert.match(starts[0].join('\n'), /"id" ext\.xid12 NOT NULL DEFAULT ext\.gen_xid12\(\), "order_key" ext\.rapkey/);
    assert.deepEqual(starts[1], []);
  });

  test('control: without the helper the second start drops the rapkey column', async () => {
    const started = await start([Order, Flake], { helper: false });
    ds = started.ds;
    assert.ok(started.ddl.some((q) => /DROP COLUMN "order_key"/.test(q)), started.ddl.join('\n'));
    const [{ keys }] = await ds.query('SELECT count(order_key)::int AS keys FROM orders');
    assert.equal(keys, 0);
    await ds.destroy();
  });
});
