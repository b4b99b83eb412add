// MikroORM 6 with pg-idgen/mikro-orm: updateSchema() next to the extension's own tables (in
// public and in a schema of its own), a second diff with nothing to do, Xid values in em.find,
// em.findByCursor pages, and a flush of loaded entities that writes nothing. The control without
// idgenMikroOrm fails the way the issue says.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { Xid, rapkey as rk } from '../../dist/index.js';
import { RapkeyType, Xid12Type, idgenMikroOrm } from '../../dist/mikro-orm.js';
import { HOST, PORT, freshDatabase, skip } from './helpers.mjs';

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
      const em = orm.em.fork();
      for (let i = 0; i < 200; i++) em.create(Order, { key: rk.build('ord', 'cn', String(i)), n: i });
      await em.flush();
      assert.equal(await pending(orm), '');
      await orm.schema.updateSchema();
      assert.equal(await orm.em.fork().count(Order), 200);
    });
  }

  test('Xid values in find and findByCursor; a flush of loaded entities writes nothing', async () => {
    const { orm, queries } = await open('node_mikro_public');
    opened.push(orm);
    await idgenMikroOrm(orm);
    const em = orm.em.fork();
    const all = await em.find(Order, {}, { orderBy: { id: 'asc' } });
    assert.equal(all.length, 200);
    assert.ok(all.every((o) => o.id instanceof Xid));
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
    const gt = await orm.em.fork().find(Order, { id: { $gt: all[197].id } }, { orderBy: { id: 'asc' } });
    assert.deepEqual(gt.map((o) => o.id.toString()), all.slice(198).map((o) => o.id.toString()));
    const inIds = await orm.em.fork().find(Order, { id: { $in: [all[1].id, all[2].id] } });
    assert.equal(inIds.length, 2);
    const seen = [];
    let after;
    for (;;) {
      const page = await orm.em.fork().findByCursor(Order, {}, { first: 64, after, orderBy: { id: 'asc' } });
      seen.push(...page.items.map((o) => o.id.toString()));
      if (!page.hasNextPage) break;
      after = page.endCursor;
    }
    assert.deepEqual(seen, all.map((o) => o.id.toString()));
    const bad = orm.em.fork();
    bad.create(Order, { key: 'ord.cn.1-0', n: 1 });
    await assert.rejects(bad.flush(), /Wrong check character/);
  });
});
