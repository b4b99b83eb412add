// node-postgres (pg): xid12 results as Xid, xid12[] as arrays, binary results refused.
//
//   await registerTypes(client);                           // one Client
//   new pg.Pool({ ...config, onConnect: registerTypes });  // every connection of a Pool
//
// Parameters need nothing: an Xid binds as its text (Xid.toPostgres), which node-postgres sends
// untyped, so the server reads it as the type the query needs (WHERE id > $1 gives xid12), and
// a JavaScript array of Xid binds as an array literal the server reads as xid12[] (= ANY($1)).
// A string works the same way. Do not cast the parameter to text or varchar: xid12 = text has
// no operator.
//
// The portable edition (portable/: xid12 a domain over text) is found too: registerTypes resolves
// to an IdgenTypeInfo whose `edition` is 'native' or 'portable'. There an xid12 column is text on
// the wire (the server describes a domain's column by its base type, text), so it comes back as a
// string whatever xid12As says (Xid.parse it); xid12[] results are arrays of Xid (or strings), and
// binary results are plain text, so nothing is refused. Parameters are the same on both editions.

import { ExtensionMissingError, type IdgenTypeInfo, type Queryable, lookupTypes } from './catalog.js';
import { Xid, xidOfServerText } from './xid.js';

export { lookupTypes } from './catalog.js';
export type { Edition, IdgenTypeInfo, Queryable } from './catalog.js';

/** What registerTypes needs: a pg Client or PoolClient. */
export interface TypeParserClient extends Queryable {
  setTypeParser(oid: number, format: 'text' | 'binary', parse: (value: any) => unknown): void;
}

export interface RegisterOptions {
  /** How an xid12 comes back: an Xid (default) or its 20-character text. */
  xid12As?: 'Xid' | 'string';
  /**
   * A database without the extension: 'error' (default) rejects with ExtensionMissingError;
   * 'skip' registers nothing and resolves to null, so a pool whose onConnect registers the types
   * can run the migration that creates the extension. Connections opened before it existed give
   * xid12 as text until they close; the ORM adapters' column types parse text as well.
   */
  ifMissing?: 'error' | 'skip';
}

/** An array value of xid12 (nested for multidimensional arrays; NULL elements as null). */
export type Xid12Array<T> = Array<T | null | Xid12Array<T>>;

export const BINARY_MESSAGE =
  'xid12 in binary result format: node-postgres decodes every field as UTF-8 before a type parser sees it, ' +
  'which corrupts the 12 bytes, so pg-idgen refuses it; run this query without binary: true (text results)';

function binaryRefused(): never {
  throw new Error(BINARY_MESSAGE);
}

/**
 * Parses PostgreSQL's text form of an array of xid12 ("{a,b,NULL}", nested braces, an optional
 * "[1:2]=" dimension prefix) with `element` for each id.
 */
export function parseXid12Array<T>(text: string, element: (id: string) => T): Xid12Array<T> {
  let i = 0;
  if (text.charCodeAt(0) === 91 /* [ */) {
    i = text.indexOf('=') + 1;
    if (i === 0) throw new Error(`not an array literal: ${JSON.stringify(text.slice(0, 60))}`);
  }
  const stack: Xid12Array<T>[] = [];
  let current: Xid12Array<T> | null = null;
  let result: Xid12Array<T> | null = null;
  let start = -1;
  const end = (at: number) => {
    if (start < 0) return;
    let token = text.slice(start, at);
    start = -1;
    if (token === 'NULL') {
      current!.push(null);
      return;
    }
    if (token.charCodeAt(0) === 34 /* " */) token = token.slice(1, -1);
    current!.push(element(token));
  };
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 123 /* { */) {
      const next: Xid12Array<T> = [];
      if (current !== null) {
        current.push(next);
        stack.push(current);
      }
      current = next;
      if (result === null) result = next;
    } else if (c === 125 /* } */) {
      end(i);
      current = stack.pop() ?? null;
    } else if (c === 44 /* , */) {
      end(i);
    } else if (start < 0) {
      start = i;
    }
  }
  if (result === null) throw new Error(`not an array literal: ${JSON.stringify(text.slice(0, 60))}`);
  return result;
}

/**
 * Looks up xid12 and xid12[] through pg_extension, or the portable edition's domain (any schema,
 * whatever search_path says; `edition` says which), and
 * sets the client's type parsers: an xid12 comes back as an Xid (or its text), an xid12[] as an
 * array; binary results of either fail with a clear error instead of a corrupt value. Returns
 * what it found. Rejects with ExtensionMissingError in a database without the extension, or with
 * { ifMissing: 'skip' } registers nothing and resolves to null.
 */
export async function registerTypes(client: TypeParserClient, options?: RegisterOptions & { ifMissing?: 'error' }): Promise<IdgenTypeInfo>;
export async function registerTypes(client: TypeParserClient, options: RegisterOptions): Promise<IdgenTypeInfo | null>;
export async function registerTypes(client: TypeParserClient, options: RegisterOptions = {}): Promise<IdgenTypeInfo | null> {
  let info: IdgenTypeInfo;
  try {
    info = await lookupTypes(client);
  } catch (e) {
    if (options.ifMissing === 'skip' && e instanceof ExtensionMissingError) return null;
    throw e;
  }
  const asString = options.xid12As === 'string';
  const one: (text: string) => unknown = asString ? (text: string) => Xid.parse(text).toString() : xidOfServerText;
  client.setTypeParser(info.xid12, 'text', one);
  client.setTypeParser(info.xid12Array, 'text', (text: string) => parseXid12Array(text, one));
  // A portable xid12 is text in binary results too (node-postgres hands the parser its string).
  client.setTypeParser(info.xid12, 'binary', info.edition === 'portable' ? one : binaryRefused);
  client.setTypeParser(info.xid12Array, 'binary', binaryRefused);
  return info;
}
