// Knex 3 and Objection 3 with pg-idgen/knex: a database without the extension, whose first
// migration creates it through the same Knex (the pool hook tolerates it), t.xid12()/t.rapkey()
// in the schema builder, migrate.latest run again doing nothing, 10,000 rows from one bulk insert,
// Xid values in where, whereIn, keyset pages (Knex has no cursor pagination of its own) and
// Objection's findById, and bad input failing with Knex's (and Objection's) error and the
// server's words.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import knex from 'knex';
import { DataError, Model } from 'objection';
import { Xid, rapkey as rk } from '../../dist/index.js';
import { extendKnex, idgenAfterCreate } from '../../dist/knex.js';
import { config, freshDatabase, serverError, skip } from './helpers.mjs';

const DB = 'node_knex';
const ROWS = 10000;

class Order extends Model {
  static get tableName() { return 'orders'; }
}

const migrations = {
  '001_pg_idgen': { up: (db) => db.raw('CREATE EXTENSION pg_idgen'), down: (db) => db.raw('DROP EXTENSION pg_idgen') },
  '002_orders': {
    up: (db) => db.schema.createTable('orders', (t) => {
      t.xid12('id', { generated: true }).primary();
      t.rapkey('order_key').unique();
      t.integer('n').notNullable();
    }),
    down: (db) => db.schema.dropTable('orders'),
  },
};

function make() {
  return knex({
    client: 'pg',
    connection: config(DB),
    pool: { min: 0, max: 2, afterCreate: idgenAfterCreate() },
    migrations: {
      migrationSource: {
        getMigrations: async () => Object.keys(migrations),
        getMigrationName: (name) => name,
        getMigration: async (name) => migrations[name],
      },
    },
  });
}

describe('Knex and Objection', { skip }, () => {
  let db;
  before(async () => {
    await freshDatabase(DB, { extension: false });
    extendKnex();
    extendKnex(); // twice is fine
    db = make();
  });
  after(async () => db && db.destroy());

  test('migrations create the extension through the pool whose hook registers the types', async () => {
    const [, done] = await db.migrate.latest();
    assert.deepEqual(done, ['001_pg_idgen', '002_orders']);
    const [col] = (await db.raw(`SELECT format_type(atttypid, atttypmod) AS t, pg_get_expr(adbin, adrelid) AS d
      FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
      WHERE attrelid = 'orders'::regclass AND attname = 'id'`)).rows;
    assert.deepEqual(col, { t: 'xid12', d: 'gen_xid12()' });
    // connections opened before the extension existed give text: the documented remedy
    await db.destroy();
    db.initialize();
    const { rows } = await db.raw("SELECT '9m4e2mr0ui3e8a215n4g'::xid12 AS id");
    assert.ok(rows[0].id instanceof Xid);
  });

  test('migrate.latest again: nothing to run, the table unchanged', async () => {
    const shape = () => db.raw(`SELECT attname, format_type(atttypid, atttypmod) AS t, pg_get_expr(adbin, adrelid) AS d
      FROM pg_attribute LEFT JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
      WHERE attrelid = 'orders'::regclass AND attnum > 0 ORDER BY attnum`).then((r) => r.rows);
    const before = await shape();
    const [, done] = await db.migrate.latest();
    assert.deepEqual(done, []);
    assert.deepEqual(await shape(), before);
  });

  test(`${ROWS} rows by one bulk insert; Xid values in where, whereIn; keyset pages: every row once`, async () => {
    const made = await db('orders').insert(Array.from({ length: ROWS }, (_, i) => ({ n: i, order_key: rk.build('ord', 'cn', String(i)) })), ['id']);
    assert.equal(made.length, ROWS);
    assert.ok(made.every((r) => r.id instanceof Xid));
    const mine = Xid.new();
    await db('orders').insert({ id: mine, n: ROWS });
    const [one] = await db('orders').where('id', mine);
    assert.ok(one.id instanceof Xid && one.id.equals(mine) && one.n === ROWS);
    const all = (await db.raw('SELECT id::text AS id FROM orders ORDER BY id')).rows.map((r) => r.id);
    assert.equal(all.length, ROWS + 1);
    const rows = await db('orders').orderBy('id');
    assert.deepEqual(rows.map((r) => r.id.toString()), all);
    assert.equal((await db('orders').where('id', Xid.parse(all[777])).first()).id.toString(), all[777]);
    // Knex has no cursor pagination of its own: id > cursor
    const seen = [];
    let cursor = null;
    for (;;) {
      const q = db('orders').select('id').orderBy('id').limit(1000);
      if (cursor) q.where('id', '>', cursor);
      const page = await q;
      if (page.length === 0) break;
      seen.push(...page.map((r) => r.id.toString()));
      cursor = page.at(-1).id;
    }
    assert.deepEqual(seen, all);
    const some = await db('orders').whereIn('id', [Xid.parse(all[3]), all[7]]).orderBy('id');
    assert.deepEqual(some.map((r) => r.id.toString()), [all[3], all[7]]);
  });

  test("a bad id or key from user input: Knex's error with the server's words", async () => {
    const badId = await serverError(DB, "SELECT 'nope'::xid12");
    await assert.rejects(db('orders').where('id', 'nope'), (e) => {
      assert.equal(e.code, badId.code);
      assert.ok(e.message.endsWith(` - ${badId.message}`), e.message); // Knex puts the SQL first
      assert.equal(e.detail, badId.detail);
      return true;
    });
    const badKey = await serverError(DB, "SELECT 'ord.cn.1-0'::rapkey");
    await assert.rejects(db('orders').insert({ n: 1, order_key: 'ord.cn.1-0' }), (e) => {
      assert.ok(e.message.endsWith(` - ${badKey.message}`), e.message);
      assert.equal(e.detail, badKey.detail);
      return true;
    });
    Order.knex(db);
    await assert.rejects(Order.query().findById('nope'), (e) => {
      assert.ok(e instanceof DataError, e.constructor.name); // Objection's class for 22P02
      assert.ok(e.message.endsWith(badId.message), e.message);
      return true;
    });
  });

  test('Objection: findById and where with Xid, ids given back as Xid', async () => {
    Order.knex(db);
    const made = await Order.query().insert({ n: 2000, order_key: rk.build('ord', 'de', '1') }).returning('*');
    assert.ok(made.id instanceof Xid);
    const found = await Order.query().findById(made.id);
    assert.ok(found.id.equals(made.id));
    assert.equal(found.order_key, rk.build('ord', 'de', '1'));
    const after = await Order.query().where('id', '>=', made.id).orderBy('id');
    assert.deepEqual(after.map((o) => o.n), [2000]);
    assert.equal(JSON.stringify(found.toJSON().id), JSON.stringify(made.id.toString()));
  });
});
