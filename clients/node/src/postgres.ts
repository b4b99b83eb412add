// Postgres.js (postgres): its custom `types` need the type ids when the instance is made, so
// look them up first:
//
//   const types = await idgenTypes(url);            // one short connection
//   const sql = postgres(url, { types });
//   const [row] = await sql`SELECT id FROM orders WHERE id > ${cursor} ORDER BY id LIMIT 1`;
//   row.id instanceof Xid;                          // true
//   await sql`SELECT * FROM orders WHERE id = ANY(${ids})`;
//
// An Xid (or a string) binds untyped as its text, so the server reads it as the type the query
// needs; a JavaScript array of them binds untyped too (= ANY(${ids}) reads xid12[]).
// xid12Array binds one typed xid12[] where the server cannot tell the type from the query. With types registered, a bad id text in a
// parameter the server types as xid12 fails in the client, with an error naming the text.
//
// The portable edition (xid12 a domain over text) works with the same code: idgenTypes finds its
// domain, xid12 columns come back as strings (text on the wire: the server describes a domain's
// column by its base type; Xid.parse them), and an Xid binds as its text. Which edition:
// (await lookupTypes(sql)).edition.

import postgres from 'postgres';
import { EDITION_QUERY, type IdgenTypeInfo, typeInfo } from './catalog.js';
import { Xid, xidOfServerText } from './xid.js';

export type { Edition, IdgenTypeInfo } from './catalog.js';

export type IdgenPostgresTypes = {
  xid12: postgres.PostgresType<Xid>;
};

/** Postgres.js's custom type for xid12 with that oid. */
export function xid12Type(oid: number): postgres.PostgresType<Xid> {
  return {
    to: oid,
    from: [oid],
    serialize: (value: Xid | string) => (value instanceof Xid ? value.toString() : Xid.parse(value).toString()),
    // Postgres.js's array parser hands a NULL element to the element parser as 'NULL'.
    parse: (raw: string) => (raw === 'NULL' ? (null as unknown as Xid) : xidOfServerText(raw)),
  };
}

/**
 * Looks the types up through a Postgres.js instance (any schema, whatever search_path says), and
 * which edition the database has: `(await lookupTypes(sql)).edition` is 'native' or 'portable'.
 */
export async function lookupTypes(sql: postgres.Sql<any>): Promise<IdgenTypeInfo> {
  return typeInfo(await sql.unsafe(EDITION_QUERY));
}

/**
 * The `types` option for postgres(): looks xid12 up through `sql` (a Postgres.js instance) or,
 * given a URL or options, through a connection of its own that it closes again.
 */
export async function idgenTypes(
  source: postgres.Sql<any> | string | postgres.Options<any> = {},
  options: postgres.Options<any> = {},
): Promise<IdgenPostgresTypes> {
  if (typeof source === 'function') return { xid12: xid12Type((await lookupTypes(source)).xid12) };
  const sql = typeof source === 'string'
    ? postgres(source, { ...options, max: 1, fetch_types: false, onnotice: () => undefined })
    : postgres({ ...source, ...options, max: 1, fetch_types: false, onnotice: () => undefined });
  try {
    return { xid12: xid12Type((await lookupTypes(sql)).xid12) };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Binds ids as one xid12[] parameter on an instance made with idgenTypes' types. */
export function xid12Array(sql: postgres.Sql<any>, ids: ReadonlyArray<Xid | string>) {
  const oid = (sql.options as any)?.types?.xid12?.to;
  if (typeof oid !== 'number') {
    throw new Error('xid12Array needs a Postgres.js instance made with { types: await idgenTypes(...) }');
  }
  return sql.array(ids.map((id) => (id instanceof Xid ? id.toString() : Xid.parse(id).toString())) as any, oid);
}
