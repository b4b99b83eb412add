// Finding the extension's types by schema (pg_extension), shared by the adapters: the extension
// may live in any schema, also one outside search_path.

/** Anything with node-postgres's query(text, values) → Promise<{ rows }>: a pg Client, Pool or PoolClient. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/** The pg_idgen types of one database. */
export interface IdgenTypeInfo {
  /** The schema the extension lives in. */
  schema: string;
  /** xid12's type oid and its array type's. */
  xid12: number;
  xid12Array: number;
  /** Whether xid12 is visible through search_path unqualified. */
  visible: boolean;
}

// Every relation, function, operator and type is named with its schema: nothing resolves through
// the caller's search_path, where another role may have put look-alikes.
export const TYPE_QUERY = `
SELECT t.oid::pg_catalog.int4 AS oid, t.typarray::pg_catalog.int4 AS typarray, n.nspname AS schema,
       pg_catalog.pg_type_is_visible(t.oid) AS visible
  FROM pg_catalog.pg_extension e
  JOIN pg_catalog.pg_type t ON t.typnamespace OPERATOR(pg_catalog.=) e.extnamespace
   AND t.typname OPERATOR(pg_catalog.=) 'xid12'::pg_catalog.name
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace
 WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen'::pg_catalog.name`;

export const SCHEMA_QUERY = `
SELECT n.nspname AS schema FROM pg_catalog.pg_extension e
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace
 WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen'::pg_catalog.name`;

/** The database has no pg_idgen extension. */
export class ExtensionMissingError extends Error {
  override name = 'ExtensionMissingError';
}

export function missing(): ExtensionMissingError {
  return new ExtensionMissingError(
    'the pg_idgen extension is not installed in this database: no type xid12 found through ' +
    'pg_extension (run CREATE EXTENSION pg_idgen there first)');
}

export function typeInfo(rows: any[]): IdgenTypeInfo {
  if (rows.length !== 1) throw missing();
  const r = rows[0];
  return { schema: r.schema, xid12: Number(r.oid), xid12Array: Number(r.typarray), visible: r.visible === true || r.visible === 't' };
}

/** Looks the types up through any node-postgres-like client or pool. */
export async function lookupTypes(db: Queryable): Promise<IdgenTypeInfo> {
  return typeInfo((await db.query(TYPE_QUERY)).rows);
}

/** A quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return '"' + name.replace(/"/g, '""') + '"';
}

/** A schema-qualified name ("schema".name). */
export function qualified(schema: string | undefined, name: string): string {
  return schema === undefined ? name : `${quoteIdent(schema)}.${name}`;
}

/**
 * A schema-qualified name as PostgreSQL prints it (pg_get_expr, regtype): schema.name when the
 * schema is a plain lower-case identifier, "Schema".name otherwise. ORMs that compare the DDL
 * they would write with what the catalog says need this form.
 */
export function printedName(schema: string | undefined, name: string): string {
  return schema !== undefined && /^[a-z_][a-z0-9_$]*$/.test(schema) ? `${schema}.${name}` : qualified(schema, name);
}
