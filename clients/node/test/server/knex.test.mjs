// Knex 3 and Objection 3 with pg-idgen/knex: a database without the extension, whose first
// migration creates it through the same Knex (the pool hook tolerates it), t.xid12()/t.rapkey()
// in the schema builder, and Xid values in where, whereIn, keyset pages and Objection's findById.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import knex from 'knex';
import { Model } from 'objection';
import { Xid, rapkey as rk } from '../../dist/index.js';
import { extendKnex, idgenAfterCreate } from '../../dist/knex.js';
import { config, freshDatabase, skip } from './helpers.mjs';

const DB = 'node_knex';

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

  test('Xid values in insert, where, whereIn and keyset pages', async () => {
    await db('orders').insert(Array.from({ length: 300 }, (_, i) => ({ n: i, order_key: rk.build('ord', 'cn', String(i)) })));
    const mine = Xid.new();
    await db('orders').insert({ id: mine, n: 1000 });
    const [one] = await db('orders').where('id', mine);
    assert.ok(one.id instanceof Xid && one.id.equals(mine) && one.n === 1000);
    const all = (await db('orders').select('id').orderBy('id')).map((r) => r.id.toString());
    const seen = [];
    let cursor = null;
    for (;;) {
      const q = db('orders').select('id').orderBy('id').limit(64);
      if (cursor) q.where('id', '>', cursor);
      const rows = await q;
      if (rows.length === 0) break;
      seen.push(...rows.map((r) => r.id.toString()));
      cursor = rows.at(-1).id;
    }
    assert.equal(seen.length, 301);
    assert.deepEqual(seen, all);
    const some = await db('orders').whereIn('id', [Xid.parse(all[3]), all[7]]).orderBy('id');
    assert.deepEqual(some.map((r) => r.id.toString()), [all[3], all[7]]);
    await assert.rejects(db('orders').insert({ n: 1, order_key: 'ord.cn.1-0' }), /rapkey/);
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
