// The ORM adapters without a server: TypeORM's transformers and column options, Knex's column
// builders (DDL as text), Sequelize's data types, MikroORM's types.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import knex from 'knex';
import { Xid } from '../../dist/index.js';
import { genXid12, rapkeyColumn, snowflakeColumn, xid12Column, xidTransformer } from '../../dist/typeorm.js';
import { extendKnex } from '../../dist/knex.js';
import { RAPKEY, XID12 } from '../../dist/sequelize.js';
import { RapkeyType, Xid12Type } from '../../dist/mikro-orm.js';

const ID = '9m4e2mr0ui3e8a215n4g';

test('TypeORM: column options and transformers', () => {
  assert.deepEqual({ ...xid12Column({ nullable: true }), transformer: undefined }, { type: 'xid12', nullable: true, transformer: undefined });
  assert.equal(xid12Column({ schema: 'ext' }).type, 'ext.xid12'); // as PostgreSQL prints it
  assert.equal(xid12Column({ schema: 'My Ext' }).type, '"My Ext".xid12');
  assert.equal(rapkeyColumn().type, 'rapkey');
  assert.equal(genXid12('ext')(), 'ext.gen_xid12()');
  assert.equal(xidTransformer.to(Xid.parse(ID)), ID);
  assert.ok(xidTransformer.from(ID).equals(Xid.parse(ID)));
  assert.equal(xidTransformer.from(null), null);
  assert.throws(() => xidTransformer.to('nope'), /xid12/);
  assert.equal(snowflakeColumn().transformer.from('123'), 123n);
});

test('Knex: t.xid12() and t.rapkey() in the DDL', () => {
  extendKnex();
  const db = knex({ client: 'pg' });
  const ddl = db.schema.createTable('orders', (t) => {
    t.xid12('id', { generated: true }).primary();
    t.xid12('ref', { schema: 'ext' });
    t.rapkey('order_key', { schema: 'ext' }).unique();
  }).toString();
  assert.match(ddl, /"id" xid12 default gen_xid12\(\)/);
  assert.match(ddl, /"ref" "ext"\.xid12/);
  assert.match(ddl, /"order_key" "ext"\.rapkey/);
});

test('Sequelize: XID12 and RAPKEY', () => {
  const x = new XID12();
  assert.equal(x.toSql(), 'xid12');
  assert.equal(new XID12('ext').toSql(), '"ext".xid12');
  assert.equal(x.stringify(Xid.parse(ID)), ID);
  assert.throws(() => x.validate('nope'), /xid12/);
  const r = new RAPKEY();
  assert.equal(r.toSql(), 'rapkey');
  assert.throws(() => r.bindParam('ord.cn.1-0', { bindParam: (v) => v }), /Wrong check character/);
});

test('MikroORM: Xid12Type and RapkeyType', () => {
  const t = new Xid12Type();
  assert.equal(t.getColumnType(), 'xid12');
  assert.equal(new Xid12Type('ext').getColumnType(), 'ext.xid12');
  assert.equal(new Xid12Type('My Ext').getColumnType(), '"My Ext".xid12');
  assert.equal(t.convertToDatabaseValue(Xid.parse(ID)), ID);
  assert.ok(t.convertToJSValue(ID).equals(Xid.parse(ID)));
  assert.equal(t.convertToJSValue(null), null);
  assert.throws(() => new RapkeyType().convertToDatabaseValue('ord.cn.1-0'), /Wrong check character/);
});
