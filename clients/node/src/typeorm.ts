// TypeORM (0.3, postgres driver): the types known to the driver, columns that give Xid, and a
// synchronize that leaves xid12 and rapkey columns alone.
//
//   const ds = idgenTypeorm(new DataSource({ type: 'postgres', ..., synchronize: true }));
//   @PrimaryColumn(xid12Column({ default: genXid12() })) id!: Xid;
//   @Column(rapkeyColumn({ unique: true })) key!: string;
//   await ds.initialize();
//
// Call idgenTypeorm before initialize(). What it changes on that DataSource's driver:
// - 'xid12' and 'rapkey' (and "schema".xid12 when given a schema) join supportedDataTypes;
// - the tables synchronize reads learn which columns are the extension's xid12 and rapkey (a
//   domain shows as text in information_schema, so TypeORM saw a type change on every start and
//   made it by DROP COLUMN and ADD COLUMN: the values were lost);
// - a column that is xid12 or rapkey in the database but declared as another type stops
//   synchronize with an error instead of being dropped and added again.

import type { ColumnOptions, ColumnType, DataSource, ValueTransformer } from 'typeorm';
import { TYPE_QUERY, printedName } from './catalog.js';
import { Xid } from './xid.js';

type Kind = 'xid12' | 'rapkey';
const DONE = Symbol('pg-idgen/typeorm');

/** Xid in the entity, the 20-character text on the wire; null stays null. */
export const xidTransformer: ValueTransformer = {
  to: (value: unknown) => (value == null ? value : Xid.from(value as Xid | string).toString()),
  from: (value: unknown) => (value == null ? value : value instanceof Xid ? value : Xid.parse(String(value))),
};

/** bigint in the entity (TypeORM gives a bigint column as a string), decimal text on the wire. */
export const snowflakeTransformer: ValueTransformer = {
  to: (value: unknown) => (value == null ? value : String(value)),
  from: (value: unknown) => (value == null ? value : BigInt(value as string)),
};

/**
 * The type's name: xid12, or ext.xid12 when the extension is not on search_path (written the
 * way PostgreSQL prints it, which is what synchronize compares with).
 */
export function idgenType(name: Kind, schema?: string): string {
  return printedName(schema, name);
}

/** What the column helpers take: TypeORM's column options and the extension's schema. */
export type IdgenColumnOptions = Omit<ColumnOptions, 'type'> & { schema?: string };
/** What they give: your options with the type (and transformer); fits @Column and @PrimaryColumn. */
export type IdgenColumn<O> = Omit<O, 'schema'> & { type: ColumnType; transformer?: ValueTransformer };

function column<O extends IdgenColumnOptions>(type: string, options: O, transformer?: ValueTransformer): IdgenColumn<O> {
  const { schema: _schema, ...rest } = options;
  return { type: type as ColumnType, ...(transformer ? { transformer } : {}), ...rest } as IdgenColumn<O>;
}

/** Options of an xid12 column whose values are Xid: @PrimaryColumn(xid12Column({ default: genXid12() })). */
export function xid12Column<O extends IdgenColumnOptions = {}>(options: O = {} as O): IdgenColumn<O> {
  return column(idgenType('xid12', options.schema), options, xidTransformer);
}

/** Options of a rapkey column (strings; the domain's CHECK checks them on the server). */
export function rapkeyColumn<O extends IdgenColumnOptions = {}>(options: O = {} as O): IdgenColumn<O> {
  return column(idgenType('rapkey', options.schema), options);
}

/** Options of a Snowflake column: bigint whose values are bigint. */
export function snowflakeColumn<O extends Omit<ColumnOptions, 'type'> = {}>(options: O = {} as O): IdgenColumn<O> {
  return column('bigint', options, snowflakeTransformer);
}

/** The default gen_xid12() (schema-qualified when given, as PostgreSQL prints the default). */
export function genXid12(schema?: string): () => string {
  return () => `${printedName(schema, 'gen_xid12')}()`;
}

/** Which of the extension's types a column type names (xid12, ext.xid12, "ext".xid12, ...). */
function kindOf(type: unknown): Kind | undefined {
  if (typeof type !== 'string') return undefined;
  const name = type.slice(type.lastIndexOf('.') + 1).replace(/"/g, '').toLowerCase();
  return name === 'xid12' || name === 'rapkey' ? name : undefined;
}

// Every column of the database whose type is the extension's xid12 (or xid12[]) or its rapkey
// domain (or an array of it), named by the extension's schema, not by search_path.
const COLUMNS_QUERY = `
WITH x AS (${TYPE_QUERY}),
     r AS (SELECT t.oid, t.typarray FROM pg_catalog.pg_type t, pg_catalog.pg_extension e
            WHERE t.typnamespace OPERATOR(pg_catalog.=) e.extnamespace
              AND e.extname OPERATOR(pg_catalog.=) 'pg_idgen' AND t.typname OPERATOR(pg_catalog.=) 'rapkey')
SELECT n.nspname AS schema, c.relname AS table, a.attname AS column,
       n.nspname OPERATOR(pg_catalog.=) pg_catalog.current_schema() AS current,
       CASE WHEN a.atttypid IN (SELECT oid FROM x UNION ALL SELECT typarray FROM x) THEN 'xid12' ELSE 'rapkey' END AS kind,
       a.attcollation OPERATOR(pg_catalog.=) ty.typcollation AS type_collation
  FROM pg_catalog.pg_attribute a
  JOIN pg_catalog.pg_type ty ON ty.oid OPERATOR(pg_catalog.=) a.atttypid
  JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) a.attrelid
   AND c.relkind IN ('r', 'p', 'f')
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
 WHERE a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
   AND a.atttypid IN (SELECT oid FROM x UNION ALL SELECT typarray FROM x UNION ALL SELECT oid FROM r UNION ALL SELECT typarray FROM r)`;

/**
 * Teaches the DataSource's postgres driver pg_idgen's types (see the top of this file); returns
 * the DataSource. `schema`: the extension's schema, when columns name it ("ext".xid12).
 */
export function idgenTypeorm<T extends DataSource>(dataSource: T, options: { schema?: string } = {}): T {
  const driver = dataSource.driver as any;
  if (driver[DONE]) return dataSource;
  driver[DONE] = true;
  for (const kind of ['xid12', 'rapkey'] as const) {
    driver.supportedDataTypes.push(kind);
    if (options.schema !== undefined) driver.supportedDataTypes.push(idgenType(kind, options.schema));
  }

  // What the last loadTables found: "schema.table.column" → kind; the current schema's columns
  // also under ".table.column" (entities that name no schema). TypeORM clones the tables it
  // loaded, so this is kept by name, not on the loaded columns.
  let kinds = new Map<string, { kind: Kind; typeCollation: boolean }>();
  const key = (schema: string | undefined, table: string, column: string) => `${schema ?? ''}\0${table}\0${column}`;
  const createQueryRunner = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (...args: unknown[]) => {
    const runner = createQueryRunner(...args);
    const loadTables = runner.loadTables.bind(runner);
    runner.loadTables = async (...names: unknown[]) => {
      const tables = await loadTables(...names);
      if (tables.length === 0) return tables;
      const found: typeof kinds = new Map();
      for (const r of await runner.query(COLUMNS_QUERY)) {
        const it = { kind: r.kind, typeCollation: r.type_collation };
        found.set(key(r.schema, r.table, r.column), it);
        if (r.current) found.set(key(undefined, r.table, r.column), it);
      }
      kinds = found;
      return tables;
    };
    return runner;
  };

  const findChangedColumns = driver.findChangedColumns.bind(driver);
  driver.findChangedColumns = (tableColumns: any[], columnMetadatas: any[]) => {
    const entity = columnMetadatas[0]?.entityMetadata;
    const { schema, tableName } = entity ? driver.parseTableName(entity) : { schema: undefined, tableName: '' };
    const seen = tableColumns.map((tableColumn) => {
      const { kind, typeCollation } = kinds.get(key(schema, tableName, tableColumn.name)) ?? {};
      const meta = kind && columnMetadatas.find((m) => m.databaseName === tableColumn.name);
      if (!meta) return tableColumn;
      if (kindOf(meta.type) !== kind) {
        throw new Error(
          `pg-idgen: column ${tableName}.${tableColumn.name} is ${kind} in the database ` +
          `but the entity declares ${String(meta.type?.name ?? meta.type)}; synchronize would change it by DROP COLUMN ` +
          `and ADD COLUMN and lose its values. Declare it with ${kind}Column() from pg-idgen/typeorm.`);
      }
      const same = tableColumn.clone();
      same.type = driver.normalizeType(meta);
      // rapkey's domain has COLLATE "C", which information_schema shows as the column's own
      if (typeCollation && meta.collation === undefined) same.collation = undefined;
      return same;
    });
    return findChangedColumns(seen, columnMetadatas);
  };
  return dataSource;
}
