// Kysely: the column type of a table interface, the DDL type and default, and ids in queries.
//
//   interface OrdersTable { id: Xid12Column; order_key: RapkeyColumn | null; n: number }
//   await db.schema.createTable('orders')
//     .addColumn('id', xid12DataType(), (c) => c.primaryKey().defaultTo(genXid12()))
//     .execute();
//   db.selectFrom('orders').selectAll().where('id', '>', cursor).orderBy('id').limit(100)
//
// With the PostgresDialect (node-postgres), make the pool with onConnect: registerTypes from
// 'pg-idgen/pg' so ids come back as Xid; an Xid parameter binds as its untyped text.

import { sql, type ColumnType, type Expression, type RawBuilder } from 'kysely';
import { qualified } from './catalog.js';
import type { Rapkey } from './rapkey.js';
import { Xid } from './xid.js';

/** An xid12 column: selected as Xid; inserted as Xid or its text, or left to its default. */
export type Xid12Column = ColumnType<Xid, Xid | string | undefined, Xid | string>;
/** An xid12 column without a default. */
export type Xid12ColumnRequired = ColumnType<Xid, Xid | string, Xid | string>;
/** A rapkey column (text; check keys with pg-idgen's rapkey functions before writing). */
export type RapkeyColumn = ColumnType<Rapkey, string, string>;

/** The xid12 type in DDL (schema-qualified when the extension is not on search_path). */
export function xid12DataType(schema?: string): RawBuilder<unknown> {
  return sql.raw(qualified(schema, 'xid12'));
}

/** The rapkey type in DDL. */
export function rapkeyDataType(schema?: string): RawBuilder<unknown> {
  return sql.raw(qualified(schema, 'rapkey'));
}

/** The default gen_xid12(). */
export function genXid12(schema?: string): RawBuilder<Xid> {
  return sql.raw<Xid>(`${qualified(schema, 'gen_xid12')}()`);
}

/** `= ANY(ids)`'s right side: where('id', '=', anyXid(ids)). The array binds untyped: the server reads xid12[]. */
export function anyXid(ids: ReadonlyArray<Xid | string>): Expression<any> {
  return sql`any(${ids.map((id) => Xid.from(id).toString())})`;
}
