// Knex 3 (pg client), and Objection through it: t.xid12()/t.rapkey() column builders and the
// pool hook that registers the types on each new connection.
//
//   import { extendKnex, idgenAfterCreate } from 'pg-idgen/knex';
//   extendKnex();                                   // once: adds t.xid12() and t.rapkey()
//   const db = knex({ client: 'pg', connection, pool: { afterCreate: idgenAfterCreate() } });
//   await db.schema.createTable('orders', (t) => {
//     t.xid12('id', { generated: true }).primary();  // xid12 DEFAULT gen_xid12()
//     t.rapkey('order_key').unique();
//   });
//   await db('orders').where('id', '>', cursor).orderBy('id').limit(100);  // cursor: an Xid
//
// The hook tolerates a database without the extension (it registers nothing there), so the
// migration that runs CREATE EXTENSION goes through the same Knex. Connections opened before
// give xid12 as its text: after such a migration, `await db.destroy(); db.initialize();`.

import knex, { type Knex } from 'knex';
import { qualified } from './catalog.js';
import { type RegisterOptions, type TypeParserClient, registerTypes } from './pg.js';

export interface IdgenColumnOptions {
  /** The extension's schema, when it is not on search_path. */
  schema?: string;
  /** xid12 only: DEFAULT gen_xid12(). */
  generated?: boolean;
}

declare module 'knex' {
  namespace Knex {
    interface TableBuilder {
      /** An xid12 column (extendKnex() adds it). */
      xid12(columnName: string, options?: IdgenColumnOptions): Knex.ColumnBuilder;
      /** A rapkey column (extendKnex() adds it). */
      rapkey(columnName: string, options?: Omit<IdgenColumnOptions, 'generated'>): Knex.ColumnBuilder;
    }
  }
}

function extendOnce(name: string, fn: (this: Knex.TableBuilder, ...args: any[]) => Knex.ColumnBuilder): void {
  try {
    knex.TableBuilder.extend(name, fn);
  } catch (e) {
    // already there: extendKnex ran before (or another copy of pg-idgen added the same builder)
    if (!/existing method/.test(String((e as Error).message))) throw e;
  }
}

/** Adds t.xid12(name, { schema, generated }) and t.rapkey(name, { schema }) to Knex's table builder. */
export function extendKnex(): void {
  extendOnce('xid12', function (this: Knex.TableBuilder, name: string, options: IdgenColumnOptions = {}) {
    const column = this.specificType(name, qualified(options.schema, 'xid12'));
    if (options.generated) column.defaultTo((this as any).client.raw(`${qualified(options.schema, 'gen_xid12')}()`));
    return column;
  });
  extendOnce('rapkey', function (this: Knex.TableBuilder, name: string, options: IdgenColumnOptions = {}) {
    return this.specificType(name, qualified(options.schema, 'rapkey'));
  });
}

/**
 * Knex's pool.afterCreate: registers the types on each new connection (registerTypes of
 * pg-idgen/pg; ifMissing defaults to 'skip'), then calls `next` (your own afterCreate) if given.
 */
export function idgenAfterCreate(
  options: RegisterOptions = {},
  next?: (connection: any, done: (err: Error | null, connection: any) => void) => void,
): (connection: TypeParserClient, done: (err: Error | null, connection: TypeParserClient) => void) => void {
  const register: RegisterOptions = { ifMissing: 'skip', ...options };
  return (connection, done) => {
    registerTypes(connection, register).then(
      () => (next ? next(connection, done) : done(null, connection)),
      (err: Error) => done(err, connection),
    );
  };
}
