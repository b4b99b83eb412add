// Finding the extension's types by schema (pg_extension), shared by the adapters: the extension
// may live in any schema, also one outside search_path.

/** Anything with node-postgres's query(text, values) → Promise<{ rows }>: a pg Client, Pool or PoolClient. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/**
 * Which pg_idgen a database has: 'native' (the extension's base type xid12, 12 bytes) or
 * 'portable' (the SQL edition of portable/: xid12 a domain over text COLLATE "C", installed by
 * its script or as a pg_tle extension). On the portable edition an xid12 column is text on the
 * wire (the server describes a domain's column by its base type), so results are strings.
 */
export type Edition = 'native' | 'portable';

/** The pg_idgen types of one database. */
export interface IdgenTypeInfo {
  /** Which edition: 'native' or 'portable'. */
  edition: Edition;
  /** The schema the extension (or the portable edition) lives in. */
  schema: string;
  /** xid12's type oid and its array type's (on the portable edition the domain's). */
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

// Which edition the database has, and its xid12 type: its oid, array oid, schema
// and visibility. The native extension (pg_extension pg_idgen, a base type xid12) or the
// portable edition: a domain xid12 over text in the schema of the pg_tle extension pg_idgen,
// or in a schema holding idgen_portable_version() owned by the domain's owner, who must be the
// database owner (or a member of it) or a superuser: a look-alike planted by another role is
// not a candidate. The extension first; more than one portable candidate without it is an
// error naming their schemas (the query fails), never a pick by name. Every relation,
// function and operator is named with its schema.
export const EDITION_QUERY = `
WITH c AS (
SELECT s.rank, t.typtype, t.oid, t.typarray, n.nspname, n.oid AS nspoid
  FROM (SELECT e.extnamespace AS nsp, 0 AS rank, NULL::pg_catalog.oid AS owner
          FROM pg_catalog.pg_extension e
         WHERE e.extname OPERATOR(pg_catalog.=) 'pg_idgen'::pg_catalog.name
        UNION ALL
        SELECT p.pronamespace, 1, p.proowner
          FROM pg_catalog.pg_proc p
         WHERE p.proname OPERATOR(pg_catalog.=) 'idgen_portable_version'::pg_catalog.name
           AND p.pronargs OPERATOR(pg_catalog.=) 0) s
  JOIN pg_catalog.pg_type t ON t.typnamespace OPERATOR(pg_catalog.=) s.nsp
   AND t.typname OPERATOR(pg_catalog.=) 'xid12'::pg_catalog.name
   AND (t.typtype OPERATOR(pg_catalog.=) 'b'::pg_catalog.char AND s.rank OPERATOR(pg_catalog.=) 0
        OR t.typtype OPERATOR(pg_catalog.=) 'd'::pg_catalog.char
           AND t.typbasetype OPERATOR(pg_catalog.=) 'pg_catalog.text'::pg_catalog.regtype
           AND (s.owner IS NULL
                OR s.owner OPERATOR(pg_catalog.=) t.typowner
                   AND (EXISTS (SELECT 1 FROM pg_catalog.pg_database d
                                 WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
                                   AND pg_catalog.pg_has_role(t.typowner, d.datdba, 'MEMBER'::pg_catalog.text))
                        OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                                    WHERE r.oid OPERATOR(pg_catalog.=) t.typowner AND r.rolsuper))))
  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) t.typnamespace)
SELECT CASE WHEN c.typtype OPERATOR(pg_catalog.=) 'b'::pg_catalog.char THEN 'native'
            WHEN c.rank OPERATOR(pg_catalog.=) 1
             AND (SELECT pg_catalog.count(*) FROM c x WHERE x.rank OPERATOR(pg_catalog.=) 1)
                 OPERATOR(pg_catalog.>) 1
            THEN ('pg_idgen: more than one portable edition, in schemas '::pg_catalog.text
                  OPERATOR(pg_catalog.||)
                  (SELECT pg_catalog.string_agg(pg_catalog.quote_ident(x.nspname), ', '
                                                ORDER BY x.nspname)
                     FROM c x WHERE x.rank OPERATOR(pg_catalog.=) 1)
                  OPERATOR(pg_catalog.||)
                  ': drop all but one, or install the extension'::pg_catalog.text
                 )::pg_catalog.int4::pg_catalog.text
            ELSE 'portable' END AS edition,
       c.oid::pg_catalog.int4 AS oid, c.typarray::pg_catalog.int4 AS typarray, c.nspname AS schema,
       pg_catalog.pg_type_is_visible(c.oid) AS visible
  FROM c
 ORDER BY c.rank, c.nspname
 LIMIT 1`;

/** The database has no pg_idgen extension. */
export class ExtensionMissingError extends Error {
  override name = 'ExtensionMissingError';
}

export function missing(): ExtensionMissingError {
  return new ExtensionMissingError(
    'the pg_idgen extension is not installed in this database: no type xid12 found through ' +
    'pg_extension, nor a portable xid12 domain beside idgen_portable_version() ' +
    '(run CREATE EXTENSION pg_idgen there first, or the portable edition\'s script)');
}

export function typeInfo(rows: any[]): IdgenTypeInfo {
  if (rows.length !== 1) throw missing();
  const r = rows[0];
  const edition: Edition = r.edition === 'portable' ? 'portable' : 'native';
  return { edition, schema: r.schema, xid12: Number(r.oid), xid12Array: Number(r.typarray), visible: r.visible === true || r.visible === 't' };
}

/**
 * Looks the types up through any node-postgres-like client or pool, and which edition the
 * database has (`edition`); rejects with ExtensionMissingError when it has neither.
 */
export async function lookupTypes(db: Queryable): Promise<IdgenTypeInfo> {
  return typeInfo((await db.query(EDITION_QUERY)).rows);
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
