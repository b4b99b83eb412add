// A cut link between a writer and its registry, simulated by a TCP relay of the test's own on
// 127.0.0.1 (to the cluster's Unix socket) that stops forwarding, then forwards again. The
// Registry opens its own pool through the relay (a config: the connect, keepalive, statement
// and query timeouts set from `timeout`). Checked, with ids asked for in a busy loop: calls after
// the window's end throw RegistryUnavailable, no id outside the window, recovery when the relay
// forwards again, another writer meanwhile, no duplicate in the union of ids; close() bounded on
// a cut link. None of these depends on the machine's speed: the loop runs until enough calls
// have failed (not for a time), and the promise that a call at the window's end waits at most
// renewWait is checked on an idle path by the order of two timers (the call must settle before
// a timer of renewWait + 1 ms armed just after it), not by a margin in milliseconds.
import assert from 'node:assert/strict';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { Registry, RegistryUnavailable } from '../../dist/index.js';
import { HOST, PORT, config, freshDatabase, skip } from './helpers.mjs';
import { settlesWithin, withLag } from '../timing.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const DB = 'node_registry_cut';
const TIMEOUT = 3; // s, the Registry's statement bound (longer than renewWait, so the two bounds differ)
const RENEW_WAIT = 1; // s, the default
const FAILS = 2; // calls of each generator that must fail after the window's end
const GIVE_UP = 120_000; // ms past the window's end: calls that never fail are a bug, not a slow machine

/**
 * A relay 127.0.0.1:<port> → the cluster's Unix socket. `cut()`: from then on nothing is
 * forwarded either way (what arrives is held, new connections wait), as on a link that went
 * down; `restore()` forwards what was held and goes on.
 */
async function relay() {
  const target = `${HOST}/.s.PGSQL.${PORT}`;
  const pairs = new Set();
  const sockets = new Set(); // every socket of the relay, both sides: all destroyed by close()
  let down = false;
  let closed = false;
  const waiting = [];
  const track = (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    return s;
  };
  const server = net.createServer((client) => {
    track(client);
    const pair = { client, upstream: null, held: { up: [], down: [] } };
    pairs.add(pair);
    const start = () => {
      // a client gone while the link was down (its connect timed out) gets no upstream
      if (closed || client.destroyed) return;
      const upstream = track(net.connect({ path: target }));
      pair.upstream = upstream;
      upstream.on('data', (b) => (down ? pair.held.down.push(b) : client.write(b)));
      upstream.on('error', () => client.destroy());
      upstream.on('close', () => client.destroy());
      for (const b of pair.held.up.splice(0)) upstream.write(b);
    };
    client.on('data', (b) => (down || !pair.upstream ? pair.held.up.push(b) : pair.upstream.write(b)));
    client.on('error', () => pair.upstream?.destroy());
    client.on('close', () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    if (down) waiting.push(start);
    else start();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    cut() {
      down = true;
    },
    restore() {
      down = false;
      for (const start of waiting.splice(0)) start();
      for (const p of pairs) {
        if (!p.upstream) continue;
        for (const b of p.held.up.splice(0)) p.upstream.write(b);
        for (const b of p.held.down.splice(0)) p.client.write(b);
      }
    },
    async close() {
      closed = true;
      waiting.length = 0;
      const done = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await done;
    },
  };
}

describe('Registry on a cut link (a TCP relay that stops forwarding)', { skip }, () => {
  let pool;
  let link;
  before(async () => {
    await freshDatabase(DB);
    pool = new pg.Pool({ ...config(DB), max: 3 });
    link = await relay();
  });
  after(async () => {
    await link?.close();
    await pool?.end();
  });

  test('ids stop within renewWait of the window end, none outside it; they resume when the link is back', async () => {
    const reg = new Registry({ host: '127.0.0.1', port: link.port, user: 'postgres', database: DB },
      { writer: 'cut-link', timeout: TIMEOUT, renewWait: RENEW_WAIT });
    const other = new Registry(pool, { writer: 'other-side' });
    const snow = await reg.snowflake({ lease: 2 });
    const xids = await reg.xid12({ lease: 2 });
    const otherSnow = await other.snowflake({ lease: 2 });
    const made = []; // { id, kind }
    for (let i = 0; i < 20; i++) {
      made.push({ id: String(await snow.nextId()), kind: 's' }, { id: (await xids.new()).toString(), kind: 'x' });
      await sleep(5);
    }
    link.cut();
    const cutAt = performance.now();
    // the windows as they stand at the cut (no renewal gets through from now on)
    const snowHiMs = snow.grant.hiUs / 1000;
    const xidHiS = xids.grant.hiUs / 1e6;
    const hiMono = performance.now() + (Math.max(snowHiMs, xidHiS * 1000) - Date.now());
    const calls = []; // { start, end, ok, error }
    const snowDuring = [];
    const xidDuring = [];
    // make ids (and let the other writer make its own) until each generator has failed FAILS
    // times after the later window end: an outcome, however long the calls take
    const failsAfterEnd = (kind) => calls.filter((c) => c.kind === kind && !c.ok && c.start >= hiMono).length;
    while (failsAfterEnd('s') < FAILS || failsAfterEnd('x') < FAILS) {
      assert.ok(performance.now() < hiMono + GIVE_UP,
        `calls still succeed or hang ${GIVE_UP} ms past the window's end (${calls.length} calls)`);
      for (const [gen, kind, into] of [[snow, 's', snowDuring], [xids, 'x', xidDuring]]) {
        const start = performance.now();
        try {
          const id = kind === 's' ? await gen.nextId() : await gen.new();
          calls.push({ start, end: performance.now(), ok: true, kind });
          into.push(id);
        } catch (e) {
          calls.push({ start, end: performance.now(), ok: false, error: e, kind });
        }
      }
      made.push({ id: String(await otherSnow.nextId()), kind: 's' });
      await sleep(20);
    }
    const failed = calls.filter((c) => !c.ok);
    // measured, not asserted: on a loaded machine the loop's own timers are late too
    const worst = Math.max(...calls.map((c) => c.end - Math.max(c.start, hiMono)));
    const longest = Math.max(...calls.map((c) => c.end - c.start));
    for (const c of failed) assert.ok(c.error instanceof RegistryUnavailable, `${c.error}`);
    // the promise, on an idle path (one call at a time, nothing else in flight, the window
    // over, the link still cut): each call throws RegistryUnavailable before a timer of
    // renewWait + 1 ms armed just after it fires
    for (const [kind, call] of [['s', () => snow.nextId()], ['x', () => xids.new()]]) {
      const outcome = await settlesWithin(call, RENEW_WAIT * 1000 + 1);
      assert.notEqual(outcome, 'late', `a ${kind} call on the cut link outlasted renewWait`);
      assert.ok(outcome.error instanceof RegistryUnavailable, `a ${kind} call past the window's end: ${outcome.error ?? outcome.value}`);
    }
    // no id outside the window it had at the cut
    assert.ok(snowDuring.length > 0 && xidDuring.length > 0, 'ids were made on the cut link inside the window');
    for (const id of snowDuring) assert.ok(snow.time(id).getTime() < snowHiMs, 'a Snowflake id inside the window');
    for (const x of xidDuring) assert.ok(x.unixSeconds < xidHiS, 'an xid12 inside the window');
    made.push(...snowDuring.map((id) => ({ id: String(id), kind: 's' })), ...xidDuring.map((x) => ({ id: x.toString(), kind: 'x' })));
    console.log(`# cut link: ${calls.length} calls in ${((performance.now() - cutAt) / 1000).toFixed(1)} s, ` +
      `${failed.length} RegistryUnavailable, worst ${worst.toFixed(0)} ms past the window's end, longest call ${longest.toFixed(0)} ms`);

    // the link is back: ids resume (a new grant, or the old one renewed if it was not lost)
    link.restore();
    const back = performance.now();
    let snowAfter;
    let xidAfter;
    // (the cap only ends a hang: ids that never resume are a bug, not a slow machine)
    while ((snowAfter === undefined || xidAfter === undefined) && performance.now() - back < GIVE_UP) {
      try {
        snowAfter ??= await snow.nextId();
        xidAfter ??= await xids.new();
      } catch (e) {
        assert.ok(e instanceof RegistryUnavailable, `${e}`);
        await sleep(100);
      }
    }
    const resumed = performance.now() - back;
    assert.ok(snowAfter !== undefined && xidAfter !== undefined, `ids resume once the link is back (none in ${GIVE_UP} ms)`);
    console.log(`# link back: ids again after ${resumed.toFixed(0)} ms`);
    assert.ok(snowAfter > snowDuring.at(-1));
    assert.ok(xidDuring.at(-1) < xidAfter);
    made.push({ id: String(snowAfter), kind: 's' }, { id: xidAfter.toString(), kind: 'x' });
    // covered by a grant of this writer, and no duplicate in the union with the other writer's
    const w = await pool.query('SELECT (idgen_writer_of($1::bigint)).writer AS s, (idgen_writer_of($2::xid12)).writer AS x',
      [String(snowAfter), xidAfter.toString()]);
    assert.deepEqual(w.rows[0], { s: 'cut-link', x: 'cut-link' });
    assert.equal(new Set(made.map((m) => `${m.kind}${m.id}`)).size, made.length, 'no duplicate id');

    // close() on a cut link is bounded by the timeout: its releases by a timer of the timeout,
    // then the pool's end by one of what is left of it (at least 100 ms). A late first timer
    // makes the second later by as much: the bound is the timeout + 100 ms + twice the lateness
    // of a timer of the timeout armed beside it (the event loop's lag, measured in this run).
    link.cut();
    const { error, took: closing, lag } = await withLag(() => reg.close(), TIMEOUT * 1000);
    assert.equal(error, undefined);
    assert.ok(closing <= TIMEOUT * 1000 + 100 + 2 * lag + 50,
      `close() took ${closing.toFixed(0)} ms (a timer of the timeout was ${lag.toFixed(0)} ms late)`);
    console.log(`# close() on a cut link: ${closing.toFixed(0)} ms (timer lag ${lag.toFixed(0)} ms)`);
    link.restore();
    await other.close();
  });
});
