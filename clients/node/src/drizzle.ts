// Drizzle ORM (pg-core): an xid12 column type and a checked rapkey column type.
//
//   import { xid12, rapkey, genXid12 } from 'pg-idgen/drizzle';
//   const orders = pgTable('orders', {
//     id: xid12('id').primaryKey().default(genXid12()),
//     key: rapkey('order_key').unique(),
//   });
//
// When the extension lives in a schema outside search_path, say which: xid12('id', { schema:
// 'ext' }) puts "ext".xid12 in the DDL drizzle-kit writes, genXid12('ext') the default.
// Columns take and give Xid; with node-postgres and registerTypes the driver already hands out
// Xid, without it (or with Postgres.js without idgenTypes) the column parses the text.

import { gt, sql, type SQL } from 'drizzle-orm';
import { customType } from 'drizzle-orm/pg-core';
import { qualified } from './catalog.js';
import { type Rapkey, parse as parseRapkey } from './rapkey.js';
import { Xid } from './xid.js';

export interface SchemaConfig {
  /** The extension's schema, when it is not on search_path. */
  schema?: string;
}

/**
 * The type's name as drizzle-kit needs it. drizzle-kit writes a type it does not know as
 * "<name>" (in double quotes), so a schema-qualified name is given as ext"."xid12, which it
 * writes as "ext"."xid12": the name the server resolves whatever search_path says.
 */
function typeName(schema: string | undefined, name: string): string {
  return schema === undefined ? name : `${schema.replace(/"/g, '""')}"."${name}`;
}

/** An xid12 column whose values are Xid. */
export const xid12 = customType<{ data: Xid; driverData: string | Xid; config: SchemaConfig }>({
  dataType(config) {
    return typeName(config?.schema, 'xid12');
  },
  toDriver(value: Xid): string {
    return Xid.from(value).toString();
  },
  fromDriver(value: string | Xid): Xid {
    return value instanceof Xid ? value : Xid.parse(value);
  },
});

/** A rapkey column (the domain over text): values are checked before they are sent. */
export const rapkey = customType<{ data: Rapkey; driverData: string; config: SchemaConfig }>({
  dataType(config) {
    return typeName(config?.schema, 'rapkey');
  },
  toDriver(value: string): string {
    parseRapkey(value); // RapkeyError: the server's words, naming the key
    return value;
  },
});

/** The column default gen_xid12() (schema-qualified when given). */
export function genXid12(schema?: string): SQL {
  return sql.raw(`${qualified(schema, 'gen_xid12')}()`);
}

/** The condition of the next page after `cursor` (undefined on the first page: no bound). */
export function afterXid(column: Parameters<typeof gt>[0], cursor: Xid | null | undefined): SQL | undefined {
  return cursor == null ? undefined : gt(column, cursor);
}
