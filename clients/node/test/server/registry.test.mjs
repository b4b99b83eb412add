// The writer Registry over a node-postgres Pool: unique ids from several writers, each covered
// by idgen_writer_of naming its writer, renewal moving hi, a grant released from outside
// replaced by a new one, close() releasing with the last id's time, an unreachable registry
// when a renewal is due, and clocks outside the window.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import {
  ClockAheadOfWindow, ClockBeforeWindow, LeaseTooLong, PoolNotAllowed, Registry, RegistryError, RegistryUnavailable, Xid,
  snowflakeParts,
} from '../../dist/index.js';
import { registerTypes } from '../../dist/pg.js';
import { config, freshDatabase, skip } from './helpers.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const GIVE_UP = 60_000; // ms: what never happens is a bug, not a slow machine
/** Polls `probe` every 50 ms until it returns something other than undefined. */
async function until(probe, what) {
  for (const t0 = performance.now(); performance.now() - t0 < GIVE_UP; await sleep(50)) {
    const v = await probe();
    if (v !== undefined) return v;
  }
  assert.fail(`${what}: not within ${GIVE_UP} ms`);
}

describe('Registry', { skip }, () => {
  let pool;
  before(async () => {
    await freshDatabase('node_registry');
    pool = new pg.Pool({ ...config('node_registry'), max: 6, onConnect: registerTypes });
  });
  after(async () => pool && pool.end());

  const grantRow = async (id) => (await pool.query(
    `SELECT writer, slot, floor(extract(epoch FROM hi) * 1000)::bigint::text AS hi_ms, released_at,
            floor(extract(epoch FROM hi) * 1000)::bigint - floor(extract(epoch FROM lo) * 1000)::bigint AS width
       FROM idgen_grants WHERE grant_id = $1`, [id])).rows[0];

  test('three writers: unique ids, each covered by its own grant (idgen_writer_of)', async () => {
    const regs = ['w-a', 'w-b', 'w-c'].map((writer) => new Registry(pool, { writer }));
    const snows = await Promise.all(regs.map((r) => r.snowflake()));
    const xids = await Promise.all(regs.map((r) => r.xid12()));
    assert.equal(new Set(snows.map((g) => g.slot)).size, 3);
    const made = [];
    for (let i = 0; i < 3000; i++) {
      const k = i % 3;
      made.push({ id: i % 2 ? await snows[k].nextId() : snows[k].nextIdSync(), writer: `w-${'abc'[k]}`, kind: 'snowflake' });
      made.push({ id: i % 2 ? await xids[k].new() : xids[k].newSync(), writer: `w-${'abc'[k]}`, kind: 'xid12' });
    }
    assert.equal(new Set(made.map((m) => String(m.id))).size, made.length);
    for (const k of [0, 1, 2]) assert.ok(snowflakeParts(made[2 * k].id).worker === snows[k].slot);
    // every id is covered by the grant of the writer that made it
    const snowIds = made.filter((m) => m.kind === 'snowflake');
    const xidIds = made.filter((m) => m.kind === 'xid12');
    const w1 = await pool.query('SELECT (idgen_writer_of(x)).writer AS w FROM unnest($1::bigint[]) WITH ORDINALITY u(x, o) ORDER BY o', [snowIds.map((m) => String(m.id))]);
    assert.deepEqual(w1.rows.map((r) => r.w), snowIds.map((m) => m.writer));
    const w2 = await pool.query('SELECT (idgen_writer_of(x)).writer AS w FROM unnest($1::xid12[]) WITH ORDINALITY u(x, o) ORDER BY o', [xidIds.map((m) => m.id)]);
    assert.deepEqual(w2.rows.map((r) => r.w), xidIds.map((m) => m.writer));
    // in one table with server-made xid12 ids, idgen_verify finds only the server's uncovered
    await pool.query('CREATE TABLE written (id xid12 PRIMARY KEY)');
    await pool.query('INSERT INTO written SELECT unnest($1::xid12[])', [xidIds.map((m) => m.id)]);
    await pool.query('INSERT INTO written SELECT gen_xid12() FROM generate_series(1, 5)');
    const v = await pool.query("SELECT count(*)::int AS n FROM idgen_verify('written', 'id')");
    assert.ok(v.rows[0].n <= 5);
    await Promise.all(regs.map((r) => r.close()));
  });

  test('renewal in the background moves hi; close() releases with the last id time', async () => {
    const reg = new Registry(pool, { writer: 'renewing' });
    const g = await reg.snowflake({ lease: 2 });
    const first = g.grant;
    const before = await grantRow(first.grantId);
    await g.nextId();
    // about half the lease on, the timer renews: waited for as an event (the row's hi moves),
    // not for a time (GIVE_UP only ends a hang)
    const afterRenew = await until(async () => {
      const row = await grantRow(first.grantId);
      return BigInt(row.hi_ms) > BigInt(before.hi_ms) ? row : undefined;
    }, 'the background renewal moves hi');
    assert.equal(g.grant.grantId, first.grantId);
    const last = await g.nextId();
    await reg.close();
    const released = await grantRow(first.grantId);
    assert.ok(released.released_at !== null);
    assert.equal(Number(released.hi_ms), g.time(last).getTime() + 1, 'hi is just after the last id');
    await assert.rejects(g.nextId(), (e) => e instanceof RegistryError && /closed/.test(e.message));
    // an xid12 generator that made nothing releases with -infinity: hi = lo
    const reg2 = new Registry(pool, { writer: 'idle' });
    const x = await reg2.xid12();
    const xg = x.grant;
    await reg2.close();
    assert.equal(Number((await grantRow(xg.grantId)).width), 0);
  });

  test('a grant released from outside is replaced by a new grant; ids stay covered and increasing', async () => {
    const reg = new Registry(pool, { writer: 'robbed' });
    const g = await reg.xid12({ lease: 2 });
    const a = await g.new();
    const old = g.grant;
    await pool.query('SELECT idgen_release($1, $2)', [old.grantId, old.token]);
    // the background renewal gets 55000 and acquires anew: waited for as that event
    await until(async () => (g.grant !== null && g.grant.grantId !== old.grantId) || undefined,
      'a new grant replaces the released one');
    assert.notEqual(g.grant.grantId, old.grantId);
    const b = await g.new();
    assert.ok(a < b);
    const w = await pool.query('SELECT (idgen_writer_of($1::xid12)).grant_id::text AS gid', [b]);
    assert.equal(w.rows[0].gid, g.grant.grantId);
    await reg.close();
  });

  test('the window runs out while the registry is unreachable: an error, never an id outside', async () => {
    const own = new pg.Pool({ ...config('node_registry'), max: 1 });
    const reg = new Registry(own, { writer: 'cut-off' });
    const g = await reg.snowflake({ lease: 1 });
    const hiMs = g.grant.hiUs / 1000;
    await own.end(); // from now on every call fails to connect
    const ids = [];
    for (;;) {
      try {
        ids.push(g.nextIdSync());
      } catch (e) {
        assert.ok(e instanceof RegistryError, e);
        break;
      }
    }
    for (const id of ids) assert.ok(g.time(id).getTime() < hiMs);
    await assert.rejects(g.nextId(), (e) => e instanceof RegistryUnavailable && /could not be renewed, so no id is made/.test(e.message));
    await reg.close();
  });

  test("the server's refusals as their classes; no lease given: the pool's default lease", async () => {
    const reg = new Registry(pool, { writer: 'refused' });
    // the app pool's longest Snowflake lease is 3 minutes: a longer one is refused (IG004)
    await assert.rejects(reg.snowflake({ lease: '1 hour' }), (e) => e instanceof LeaseTooLong && e.sqlstate === 'IG004');
    // no lease: idgen_acquire's default (NULL: the pool's default for the kind, capped at its longest)
    const s = await reg.snowflake();
    const left = (s.grant.hiUs - s.grant.serverUs) / 1e6;
    assert.ok(left > 60 && left <= 180, `a default Snowflake lease of ${left} s (at most 3 minutes)`);
    const x = await reg.xid12();
    const xLeft = (x.grant.hiUs - x.grant.serverUs) / 1e6;
    assert.ok(xLeft > 300 && xLeft <= 600 + 1, `a default xid12 lease of ${xLeft} s (10 minutes)`);
    await reg.close();
    // a role allowed the edge pool (which grants it EXECUTE) but not the app pool (IG002)
    await pool.query('DROP ROLE IF EXISTS node_not_allowed; CREATE ROLE node_not_allowed LOGIN');
    await pool.query("SELECT idgen_pool_allow('edge', 'node_not_allowed')");
    const other = new pg.Pool({ ...config('node_registry'), user: 'node_not_allowed', max: 1 });
    try {
      const r = new Registry(other, { writer: 'not-allowed' });
      await assert.rejects(r.xid12(), (e) => e instanceof PoolNotAllowed && e.sqlstate === 'IG002');
      await r.close();
    } finally {
      await other.end();
    }
  });

  test('clocks outside the window: behind by more than maxWait, ahead by more than a lease', async () => {
    const behind = new Registry(pool, { writer: 'behind', clockMs: () => Date.now() - 60000 });
    await assert.rejects((await behind.snowflake()).nextId(), (e) => e instanceof ClockBeforeWindow && /behind/.test(e.message));
    await behind.close();
    const ahead = new Registry(pool, { writer: 'ahead', clockMs: () => Date.now() + 3600000 });
    await assert.rejects((await ahead.xid12({ lease: 60 })).new(), (e) => e instanceof ClockAheadOfWindow && /ahead of the registry server's/.test(e.message));
    await ahead.close();
    // a clock 3 s behind waits for its window and then runs
    const slow = new Registry(pool, { writer: 'slow', clockMs: () => Date.now() - 3000 });
    const s = await slow.snowflake();
    assert.equal(typeof (await s.nextId()), 'bigint');
    await slow.close();
    void Xid;
  });

  for (const kind of ['snowflake', 'xid12']) {
    test(`${kind}: the grant is the server's in any DateStyle and time zone (lo_t, hi_t, server_time)`, async () => {
      // A session with DateStyle 'SQL, DMY' and a zone 3.5 h west of UTC: the window read in
      // id-time is exactly the server's, and server_time (JSON's ISO 8601 text) lies between
      // two readings of the server's clock taken around the call, to the microsecond.
      const odd = new pg.Pool({ ...config('node_registry'), max: 1, options: '-c DateStyle=SQL,DMY -c TimeZone=America/St_Johns' });
      const clockUs = async () => BigInt((await pool.query(
        "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text AS us")).rows[0].us);
      const window = async (id) => (await pool.query(
        `SELECT (extract(epoch FROM g.lo) * 1000000)::bigint::text AS lo, (extract(epoch FROM g.hi) * 1000000)::bigint::text AS hi,
                r.lo::text AS lo_t, r.hi::text AS hi_t
           FROM idgen_grants g JOIN idgen_registry_grant r USING (grant_id) WHERE grant_id = $1`, [id])).rows[0];
      try {
        assert.equal((await odd.query('SHOW DateStyle')).rows[0].DateStyle, 'SQL, DMY');
        const reg = new Registry(odd, { writer: `odd-style-${kind}` });
        const before = await clockUs();
        const gen = kind === 'snowflake' ? await reg.snowflake({ lease: 60 }) : await reg.xid12({ lease: 60 });
        const after = await clockUs();
        const g = gen.grant;
        const w = await window(g.grantId);
        assert.deepEqual([String(g.loUs), String(g.hiUs), String(g.lo), String(g.hi)], [w.lo, w.hi, w.lo_t, w.hi_t]);
        assert.ok(before <= BigInt(g.serverUs) && BigInt(g.serverUs) <= after, `${before} <= ${g.serverUs} <= ${after}`);
        assert.ok(Number.isInteger(g.serverUs));
        const left = (g.hiUs - g.serverUs) / 1e6;
        assert.ok(left > 59 && left <= 61, `a lease of ${left} s`);
        assert.ok(kind === 'snowflake' ? (await gen.nextId()) > 0n : (await gen.new()) !== null);
        await reg.close();
      } finally {
        await odd.end();
      }
    });
  }

  test('an extension before 0.7.0 (no lo_t) is named, and no grant is made', async () => {
    await freshDatabase('node_registry_old', { extension: false });
    const old = new pg.Pool({ ...config('node_registry_old'), max: 1 });
    try {
      await old.query("CREATE EXTENSION pg_idgen VERSION '0.6.0'");
      const reg = new Registry(old, { writer: 'old-extension' });
      await assert.rejects(reg.xid12(), (e) => e instanceof RegistryError && e.constructor === RegistryError && e.sqlstate === '42703' &&
        /needs the pg_idgen extension 0\.7\.0 or later \(ALTER EXTENSION pg_idgen UPDATE\): column "lo_t" does not exist/.test(e.message));
      await reg.close();
      assert.equal((await old.query('SELECT count(*)::int AS n FROM idgen_grants WHERE NOT reserved')).rows[0].n, 0);
    } finally {
      await old.end();
    }
  });
});
