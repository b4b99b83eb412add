// A typed example: `tsc --noEmit` checks it against the package's types (npm run typecheck).
import pg from 'pg';
import postgres from 'postgres';
import { Kysely, PostgresDialect } from 'kysely';
import { integer, pgTable } from 'drizzle-orm/pg-core';
import { Registry, Snowflake, Xid, XidGenerator, rapkey, snowflakeTime, type Rapkey } from '../src/index.js';
import { registerTypes } from '../src/pg.js';
import { idgenTypes, xid12Array } from '../src/postgres.js';
import { afterXid, genXid12, rapkey as rapkeyColumn, xid12 } from '../src/drizzle.js';
import { type Xid12Column, type RapkeyColumn, xid12DataType, genXid12 as kyselyGenXid12 } from '../src/kysely.js';

export async function nodePostgres(): Promise<Xid[]> {
  const pool = new pg.Pool({ onConnect: registerTypes });
  const cursor: Xid = Xid.minFor(new Date('2026-01-01'));
  const { rows } = await pool.query<{ id: Xid }>('SELECT id FROM orders WHERE id > $1 ORDER BY id LIMIT 10', [cursor]);
  const reg = new Registry(pool, { writer: 'typed-example' });
  const snow = await reg.snowflake({ lease: '10 minutes' });
  const id: bigint = await snow.nextId();
  const x: Xid = await (await reg.xid12()).new();
  const when: Date = snowflakeTime(id, snow.epochMs);
  void when;
  await reg.close();
  await pool.end();
  return [...rows.map((r) => r.id), x];
}

export async function postgresJs(url: string): Promise<void> {
  const sql = postgres(url, { types: await idgenTypes(url) });
  const ids: Xid[] = [Xid.new(), new XidGenerator({ machine: 7 }).new()];
  await sql`SELECT * FROM orders WHERE id = ANY(${xid12Array(sql, ids)})`;
  await sql.end();
}

export const orders = pgTable('orders', {
  id: xid12('id').primaryKey().default(genXid12()),
  key: rapkeyColumn('order_key'),
  n: integer('n').notNull(),
});
export const nextPage = (cursor: Xid | null) => afterXid(orders.id, cursor);

interface Database {
  orders: { id: Xid12Column; order_key: RapkeyColumn | null; n: number };
}

export async function kysely(pool: pg.Pool): Promise<Xid | undefined> {
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  await db.schema.createTable('orders').addColumn('id', xid12DataType(), (c) => c.primaryKey().defaultTo(kyselyGenXid12()))
    .addColumn('n', 'integer').execute();
  const key: Rapkey = rapkey.build('ord', 'cn', 'sh', '202407', '8842');
  await db.insertInto('orders').values({ n: 1, order_key: key }).execute();
  const row = await db.selectFrom('orders').select('id').where('id', '>', Xid.new()).orderBy('id').executeTakeFirst();
  const plain: bigint = new Snowflake({ workerId: 1 }).nextId();
  void plain;
  return row?.id;
}
