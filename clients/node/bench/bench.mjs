// Benchmarks of pg-idgen, each against a built-in measured in the same run (ratios; these
// machines are shared and noisy, an absolute time means little):
//   - loading 1,000,000 xid12 values through node-postgres as Xid (registerTypes) against the
//     same values as plain strings (no registration);
//   - Xid.new() against crypto.randomUUID(), with Snowflake nextId() beside them.
// Needs a server with pg_idgen: PG_IDGEN_HOST (socket directory or host) and PG_IDGEN_PORT, or
// the libpq environment. Makes (once) the database node_bench with a 1,000,000-row table.
//
//   npm run build && PG_IDGEN_HOST=/var/tmp/... PG_IDGEN_PORT=54398 node bench/bench.mjs [--rows N] [--rounds R]
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Snowflake, Xid } from '../dist/index.js';
import { registerTypes } from '../dist/pg.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? dflt : Number(process.argv[i + 1]);
};
const ROWS = arg('--rows', 1_000_000);
const ROUNDS = arg('--rounds', 5);
const N = arg('--ids', 2_000_000);
const conn = (database) => ({
  host: process.env.PG_IDGEN_HOST ?? process.env.PGHOST, port: Number(process.env.PG_IDGEN_PORT ?? process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres', database,
});
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

async function setup() {
  const admin = new pg.Client(conn('postgres'));
  await admin.connect();
  const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = 'node_bench'");
  if (!rowCount) await admin.query('CREATE DATABASE node_bench');
  await admin.end();
  const c = new pg.Client(conn('node_bench'));
  await c.connect();
  await c.query('CREATE EXTENSION IF NOT EXISTS pg_idgen');
  const have = await c.query("SELECT count(*)::int AS n FROM pg_class WHERE relname = 'bench_ids'");
  const n = have.rows[0].n ? (await c.query('SELECT count(*)::int AS n FROM bench_ids')).rows[0].n : -1;
  if (n !== ROWS) {
    await c.query('DROP TABLE IF EXISTS bench_ids');
    await c.query(`CREATE TABLE bench_ids AS SELECT gen_xid12(timestamptz '2026-01-01' + g * interval '1 second') AS id
      FROM generate_series(1, ${ROWS}) g`);
    await c.query('VACUUM ANALYZE bench_ids');
  }
  await c.end();
}

async function load(client) {
  const t = performance.now();
  const { rows } = await client.query('SELECT id FROM bench_ids');
  const ms = performance.now() - t;
  if (rows.length !== ROWS) throw new Error(`loaded ${rows.length} rows`);
  return { ms, first: rows[0].id };
}

function perCall(fn) {
  const t = performance.now();
  let last;
  for (let i = 0; i < N; i++) last = fn();
  const ns = ((performance.now() - t) * 1e6) / N;
  if (last === undefined) throw new Error('nothing made');
  return ns;
}

await setup();
const plain = new pg.Client(conn('node_bench'));
const typed = new pg.Client(conn('node_bench'));
await plain.connect();
await typed.connect();
await registerTypes(typed);
const asText = [];
const asXid = [];
await load(plain); // warm up both (and the server's cache)
await load(typed);
for (let r = 0; r < ROUNDS; r++) {
  const a = await load(plain);
  const b = await load(typed);
  if (typeof a.first !== 'string' || !(b.first instanceof Xid)) throw new Error('the two clients do not differ as meant');
  asText.push(a.ms);
  asXid.push(b.ms);
}
await plain.end();
await typed.end();
const loadRatio = median(asXid) / median(asText);
console.log(`load ${ROWS} xid12 through node-postgres (median of ${ROUNDS}): strings ${median(asText).toFixed(0)} ms, ` +
  `Xid ${median(asXid).toFixed(0)} ms: ratio ${loadRatio.toFixed(2)}x (goal <= 1.5x)`);

const snow = new Snowflake({ workerId: 1 });
const uuid = [];
const xid = [];
const sf = [];
perCall(randomUUID); perCall(Xid.new); perCall(() => snow.nextId()); // warm up
for (let r = 0; r < ROUNDS; r++) {
  uuid.push(perCall(randomUUID));
  xid.push(perCall(Xid.new));
  sf.push(perCall(() => snow.nextId()));
}
const newRatio = median(xid) / median(uuid);
console.log(`${N} ids per round (median of ${ROUNDS}): crypto.randomUUID() ${median(uuid).toFixed(1)} ns, ` +
  `Xid.new() ${median(xid).toFixed(1)} ns: ratio ${newRatio.toFixed(2)}x (goal <= 1.0x); ` +
  `Snowflake nextId() ${median(sf).toFixed(1)} ns (${(median(sf) / median(uuid)).toFixed(2)}x; at most 4,096 ids per ms by design)`);
