// Shared by the server tests: the cluster scripts/test_node.sh names (PG_IDGEN_HOST, a socket
// directory, and PG_IDGEN_PORT), fresh databases, and the big table the pagination tests walk.
import pg from 'pg';

export const HOST = process.env.PG_IDGEN_HOST;
export const PORT = Number(process.env.PG_IDGEN_PORT);
export const skip = !HOST || !PORT ? 'PG_IDGEN_HOST and PG_IDGEN_PORT are not set (scripts/test_node.sh sets them)' : false;

/**
 * Rows of the pagination table: PG_IDGEN_NODE_ROWS, else 100,000 on PostgreSQL 18 and later
 * and 20,000 on the older versions (the drivers are the same; the test command's time is not).
 */
export const ROWS = process.env.PG_IDGEN_NODE_ROWS ? Number(process.env.PG_IDGEN_NODE_ROWS) : await defaultRows();

async function defaultRows() {
  if (skip) return 0;
  const c = new pg.Client(config('postgres'));
  await c.connect();
  try {
    const { rows } = await c.query("SELECT current_setting('server_version_num')::int AS v");
    return rows[0].v >= 180000 ? 100000 : 20000;
  } finally {
    await c.end();
  }
}

export function config(database) {
  return { host: HOST, port: PORT, user: 'postgres', database };
}

export function url(database) {
  return `postgres://postgres@${encodeURIComponent(HOST)}:${PORT}/${database}`;
}

/** Drops and creates a database with the extension (in `schema` when given, created first). */
export async function freshDatabase(name, { schema, extension = true } = {}) {
  const admin = new pg.Client(config('postgres'));
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  if (!extension) return name;
  const c = new pg.Client(config(name));
  await c.connect();
  try {
    if (schema) await c.query(`CREATE SCHEMA ${schema}; CREATE EXTENSION pg_idgen SCHEMA ${schema}`);
    else await c.query('CREATE EXTENSION pg_idgen');
  } finally {
    await c.end();
  }
  return name;
}

/**
 * CREATE TABLE items (id xid12 PRIMARY KEY, n int) with ROWS rows: ids of 97 machine ids,
 * many pids and 5,000 seconds, plus a few made by gen_xid12(); `q` is a schema prefix ('ext.').
 */
export async function bigTable(client, q = '') {
  await client.query(`
    CREATE TABLE items (id ${q}xid12 PRIMARY KEY, n int NOT NULL);
    INSERT INTO items
      SELECT ${q}xid12_from_parts(timestamptz '2026-01-01 00:00:00+00' + (g % 5000) * interval '1 second',
                                  decode(lpad(to_hex((g * 7919) % 97), 6, '0'), 'hex'), (g * 31) % 65536, g), g
        FROM generate_series(1, ${ROWS - 100}) g;
    INSERT INTO items SELECT ${q}gen_xid12(), -g FROM generate_series(1, 100) g;
    ANALYZE items`);
  const { rows } = await client.query({ text: 'SELECT id::text AS id FROM items ORDER BY id', rowMode: 'array' });
  return rows.map((r) => r[0]);
}

/** What the server says to `sql` (which must fail): its message and DETAIL. */
export async function serverError(database, sql) {
  const c = new pg.Client(config(database));
  await c.connect();
  try {
    await c.query(sql);
  } catch (e) {
    return { message: e.message, detail: e.detail, code: e.code };
  } finally {
    await c.end();
  }
  throw new Error(`${sql} did not fail`);
}
