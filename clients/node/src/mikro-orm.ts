// MikroORM 6 (@mikro-orm/postgresql): custom types for xid12 and rapkey, and a schema generator
// that leaves the extension's own tables alone.
//
//   import { Xid12Type, RapkeyType, idgenMikroOrm } from 'pg-idgen/mikro-orm';
//   @PrimaryKey({ type: Xid12Type, defaultRaw: 'gen_xid12()' }) id!: Xid;
//   @Property({ type: RapkeyType, unique: true }) key!: string;
//   const orm = await MikroORM.init({ ... });
//   await idgenMikroOrm(orm);             // before orm.schema.updateSchema() / migrations
//
// The extension owns tables (the writer registry's, idgen_backfill_progress, rapkey_counter):
// the schema generator sees tables no entity declares and drops them, which PostgreSQL refuses
// ("extension pg_idgen requires it"), wherever the extension lives. idgenMikroOrm asks the
// catalog which tables the extension owns (pg_depend), so the list stays right across extension
// versions, and adds them to schemaGenerator.skipTables. It also lets the generator read a
// rapkey column as rapkey (information_schema shows the domain's base type, text, so every
// diff altered the column to rapkey again).

import { Type } from '@mikro-orm/core';
// MikroORM reads a type outside the default schema as schema.name: write it the same way.
import { printedName as typeName } from './catalog.js';
import { validate as validateRapkey } from './rapkey.js';
import { Xid } from './xid.js';

/** xid12: Xid in the entity, its text to and from the database. */
export class Xid12Type extends Type<Xid | null | undefined, string | null | undefined> {
  /** `schema`: the extension's schema when it is not on search_path. */
  constructor(readonly schema?: string) {
    super();
  }
  override convertToDatabaseValue(value: Xid | string | null | undefined): string | null | undefined {
    return value == null ? (value as null | undefined) : Xid.from(value).toString();
  }
  override convertToJSValue(value: Xid | string | null | undefined): Xid | null | undefined {
    return value == null ? (value as null | undefined) : value instanceof Xid ? value : Xid.parse(value);
  }
  override compareAsType(): string {
    return 'string';
  }
  override getColumnType(): string {
    return typeName(this.schema, 'xid12');
  }
}

/** rapkey: strings, checked (RapkeyError) before they are written. */
export class RapkeyType extends Type<string | null | undefined, string | null | undefined> {
  constructor(readonly schema?: string) {
    super();
  }
  override convertToDatabaseValue(value: string | null | undefined): string | null | undefined {
    return value == null ? value : validateRapkey(value);
  }
  override compareAsType(): string {
    return 'string';
  }
  override getColumnType(): string {
    return typeName(this.schema, 'rapkey');
  }
}

// The tables the extension owns (a member of it in pg_depend), in whatever schema it lives.
export const EXTENSION_TABLES_QUERY = `
SELECT c.relname AS name FROM pg_catalog.pg_depend d
  JOIN pg_catalog.pg_extension e ON e.oid OPERATOR(pg_catalog.=) d.refobjid
  JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) d.objid
 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
   AND d.deptype OPERATOR(pg_catalog.=) 'e' AND e.extname OPERATOR(pg_catalog.=) 'pg_idgen'
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
 ORDER BY 1`;

// Every column whose type is the extension's rapkey domain, and whether the domain is visible.
const RAPKEY_COLUMNS_QUERY = `
SELECT n.nspname AS schema_name, c.relname AS table_name, a.attname AS column_name,
       tn.nspname AS type_schema, pg_catalog.pg_type_is_visible(t.oid) AS visible
  FROM pg_catalog.pg_extension e
  JOIN pg_catalog.pg_type t ON t.typnamespace OPERATOR(pg_catalog.=) e.extnamespace AND t.typname OPERATOR(pg_catalog.=) 'rapkey'
  JOIN pg_catalog.pg_namespace tn ON tn.oid OPERATOR(pg_catalog.=) t.typnamespace
  JOIN pg_catalog.pg_attribute a ON a.atttypid OPERATOR(pg_catalog.=) t.oid AND NOT a.attisdropped
  JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid AND c.relkind IN ('r', 'p', 'f')
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
 WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen'`;

/** What idgenMikroOrm needs of a MikroORM instance (MikroORM<PostgreSqlDriver>). */
export interface OrmLike {
  config: { get(key: 'schemaGenerator'): { skipTables?: Array<string | RegExp> } };
  em: { getConnection(): { execute(sql: string): Promise<any> }; getPlatform(): { getSchemaHelper(): unknown } };
}

const DONE = Symbol('pg-idgen/mikro-orm');

/**
 * Adds the extension's tables to the schema generator's skipTables (MikroORM matches them by
 * name, in any schema) and returns their names (none in a database without the extension; call
 * it again after the migration that creates it). Makes the generator read rapkey columns as
 * rapkey, so a second updateSchema() has nothing to do.
 */
export async function idgenMikroOrm(orm: OrmLike): Promise<string[]> {
  const rows: Array<{ name: string }> = await orm.em.getConnection().execute(EXTENSION_TABLES_QUERY);
  const names = rows.map((r) => r.name);
  const options = orm.config.get('schemaGenerator');
  const skip = (options.skipTables ??= []);
  for (const name of names) if (!skip.includes(name)) skip.push(name);

  const helper = orm.em.getPlatform().getSchemaHelper() as any;
  if (helper && !helper[DONE]) {
    helper[DONE] = true;
    const getAllColumns = helper.getAllColumns.bind(helper);
    helper.getAllColumns = async (connection: any, ...rest: unknown[]) => {
      const all = await getAllColumns(connection, ...rest);
      for (const r of await connection.execute(RAPKEY_COLUMNS_QUERY)) {
        const column = all[helper.getTableKey(r)]?.find((c: any) => c.name === r.column_name);
        if (!column) continue;
        column.mappedType = new RapkeyType(r.visible ? undefined : r.type_schema);
        column.type = column.mappedType.getColumnType();
      }
      return all;
    };
  }
  return names;
}
