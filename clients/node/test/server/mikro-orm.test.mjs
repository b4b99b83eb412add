// MikroORM 6 with pg-idgen/mikro-orm: updateSchema() next to the extension's own tables (in
// public and in a schema of its own), a second diff with nothing to do, 10,000 rows from
// em.insertMany, Xid values in em.find, em.findByCursor pages and id > cursor pages (every row
// once, the server's order), a flush of loaded entities that writes nothing, and bad input
// failing with the server's words. The control without idgenMikroOrm fails the way the issue says.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { Xid, rapkey as rk } from '../../dist/index.js';
import { RapkeyType, Xid12Type, idgenMikroOrm } from '../../dist/mikro-orm.js';
import { HOST, PORT, freshDatabase, serverError, skip } from './helpers.mjs';

const ROWS = 10000;

class Order {}
function entity(schema) {
  return new EntitySchema({
    class: Order,
    tableName: 'orders',
    properties: {
      id: { type: schema ? new Xid12Type(schema) : Xid12Type, primary: true, defaultRaw: schema ? `${schema}.gen_xid12()` : 'gen_xid12()' },
      key: { type: schema ? new RapkeyType(schema) : RapkeyType, unique: true, nullable: true },
      n: { type: 'integer' },
    },
  });
}

async function open(dbName, schema) {
  const queries = [];
  const orm = await MikroORM.init({
    entities: [entity(schema)], dbName, host: HOST, port: PORT, user: 'postgres', pool: { max: 2 },
    debug: ['query'], logger: (m) => queries.push(m), discovery: { warnWhenNoEntities: false },
  });
  return { orm, queries };
}

const pending = async (orm) => (await orm.schema.getUpdateSchemaSQL()).replace(/set names 'utf8';/, '').trim();

describe('MikroORM', { skip }, () => {
  const opened = [];
  after(async () => { for (const o of opened) await o.close(); });

  test('control: without idgenMikroOrm updateSchema tries to drop the extension tables', async () => {
    await freshDatabase('node_mikro_control');
    const { orm } = await open('node_mikro_control');
    opened.push(orm);
    await assert.rejects(orm.schema.updateSchema(), /because extension pg_idgen requires it/);
  });

  for (const schema of [undefined, 'ext']) {
    test(`updateSchema twice with the extension in ${schema ?? 'public'}: the second has nothing to do`, async () => {
      const db = `node_mikro_${schema ?? 'public'}`;
      await freshDatabase(db, { schema });
      const { orm } = await open(db, schema);
      opened.push(orm);
      const skipped = await idgenMikroOrm(orm);
      assert.ok(skipped.includes('idgen_backfill_progress') && skipped.includes('rapkey_counter'), skipped.join());
      await orm.schema.updateSchema();
      const rows = schema ? 200 : ROWS; // the lookups and pages below use the public one
      await orm.em.fork().insertMany(Order, Array.from({ length: rows }, (_, i) => ({ key: rk.build('ord', 'cn', String(i)), n: i })));
      assert.equal(await pending(orm), '');
      await orm.schema.updateSchema();
      assert.equal(await pending(orm), '');
      assert.equal(await orm.em.fork().count(Order), rows);
    });
  }

  test('Xid values in find and findByCursor; a flush of loaded entities writes nothing', async () => {
    const { orm, queries } = await open('node_mikro_public');
    opened.push(orm);
    await idgenMikroOrm(orm);
    const em = orm.em.fork();
    const all = await em.find(Order, {}, { orderBy: { id: 'asc' } });
    assert.equal(all.length, ROWS);
    assert.ok(all.every((o) => o.id instanceof Xid));
    const server = (await em.getConnection().execute('SELECT id::text AS id FROM orders ORDER BY id')).map((r) => r.id);
    assert.deepEqual(all.map((o) => o.id.toString()), server);
    assert.ok(queries.some((q) => /select/i.test(q))); // the logger sees the queries
    queries.length = 0;
    all[0].n = -1; // one change: one update
    await em.flush();
    assert.equal(queries.filter((q) => /update/i.test(q)).length, 1, queries.join('\n'));
    queries.length = 0;
    await em.flush();
    assert.deepEqual(queries.filter((q) => /update|insert/i.test(q)), []);
    all[0].n = 0;
    await em.flush();
    const one = await orm.em.fork().findOneOrFail(Order, { id: all[10].id });
    assert.equal(one.n, all[10].n);
    const gt = await orm.em.fork().find(Order, { id: { $gt: all[ROWS - 3].id } }, { orderBy: { id: 'asc' } });
    assert.deepEqual(gt.map((o) => o.id.toString()), all.slice(ROWS - 2).map((o) => o.id.toString()));
    const inIds = await orm.em.fork().find(Order, { id: { $in: [all[1].id, all[2].id] } });
    assert.equal(inIds.length, 2);
    // MikroORM's own cursor pagination, then id > cursor: every row once, the server's order
    const seen = [];
    let after;
    for (;;) {
      const page = await orm.em.fork().findByCursor(Order, {}, { first: 1000, after, orderBy: { id: 'asc' } });
      seen.push(...page.items.map((o) => o.id.toString()));
      if (!page.hasNextPage) break;
      after = page.endCursor;
    }
    assert.deepEqual(seen, server);
    const keyset = [];
    let cursor;
    for (;;) {
      const page = await orm.em.fork().find(Order, cursor ? { id: { $gt: cursor } } : {}, { orderBy: { id: 'asc' }, limit: 1000 });
      if (page.length === 0) break;
      keyset.push(...page.map((o) => o.id.toString()));
      cursor = page.at(-1).id;
    }
    assert.deepEqual(keyset, server);
  });

  test("a bad id or key from user input: the error says the server's words", async () => {
    const { orm } = await open('node_mikro_public');
    opened.push(orm);
    // Xid12Type parses a string id before MikroORM sends it (XidError)
    const badId = await serverError('node_mikro_public', "SELECT 'nope'::xid12");
    await assert.rejects(orm.em.fork().findOne(Order, { id: 'nope' }), (e) => {
      assert.equal(e.name, 'XidError');
      assert.equal(e.message, `${badId.message}: ${badId.detail}`);
      return true;
    });
    // RapkeyType checks keys before they are written (RapkeyError): the server's DETAIL
    const badKey = await serverError('node_mikro_public', "SELECT 'ord.cn.1-0'::rapkey");
    const bad = orm.em.fork();
    bad.create(Order, { key: 'ord.cn.1-0', n: 1 });
    await assert.rejects(bad.flush(), (e) => {
      assert.equal(e.name, 'RapkeyError');
      assert.equal(e.message, `invalid input syntax for type rapkey: ${badKey.detail}`);
      return true;
    });
    // a raw query's bound value is the server's to check: the driver's (pg's) error comes through
    await assert.rejects(orm.em.getConnection().execute('SELECT n FROM orders WHERE id = ?', ['nope']), (e) => {
      assert.equal(e.code, badId.code);
      assert.ok(e.message.endsWith(` - ${badId.message}`), e.message); // Knex puts the SQL first
      assert.equal(e.detail, badId.detail);
      return true;
    });
  });
});
