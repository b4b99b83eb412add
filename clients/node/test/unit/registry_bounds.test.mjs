// The Registry over a fake Queryable (no server): what it sends for the lease, and its bounds:
// a statement that never comes back is abandoned after `timeout`, an id at the window's end
// waits at most `renewWait` and makes no id outside the window, close() is bounded; the
// registry's refusals reach the caller as their own classes (a fenced acquire as
// RegistryFenced), and a lost grant (55000, 42704) is replaced by a new one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { performance } from 'node:perf_hooks';
import { Registry, RegistryFenced, RegistryUnavailable, snowflakeParts } from '../../dist/index.js';
import { settlesWithin } from '../timing.mjs';

const EPOCH = 1288834974657;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A fake database: answers the schema query, and idgen_acquire/renew/release with a window of
 * `windowMs` from now; `hang` makes every statement from then on never answer, `refuse` makes
 * the next matching statement fail with a server error.
 */
function fakeDb({ windowMs = 400 } = {}) {
  const db = {
    sent: [],
    hang: false,
    refuse: [], // { match: /idgen_renew/, code, message, keep }: the first match fails (keep: every one)
    grants: 0,
    async query(text, values) {
      db.sent.push({ text, values });
      if (db.hang) return new Promise(() => undefined);
      const r = db.refuse.find((x) => x.match.test(text));
      if (r) {
        const { code, message } = r;
        if (!r.keep) db.refuse.splice(db.refuse.indexOf(r), 1);
        throw Object.assign(new Error(message), { code, severity: 'ERROR' });
      }
      if (text.includes('pg_extension')) return { rows: [{ schema: 'public' }] };
      const now = Date.now();
      if (text.includes('idgen_release')) return { rows: [{ grant_id: '1' }] };
      const renew = text.includes('idgen_renew');
      if (!renew) db.grants++;
      // The row as the client selects it: the window in the kind's id-time (lo_t, hi_t), the
      // server's clock as JSON's text of a timestamptz.
      const kind = text.includes('idgen_acquire') ? values[0] : 'snowflake';
      const t = kind === 'xid12' ? (ms) => String(Math.floor(ms / 1000)) : (ms) => String(ms - EPOCH);
      return {
        rows: [{
          grant_id: renew ? values[0] : String(db.grants), token: '7', kind,
          slot: 5, epoch_ms: kind === 'xid12' ? null : String(EPOCH), lo_t: t(now - 1000), hi_t: t(now + windowMs),
          server_time: JSON.stringify(new Date(now).toISOString()),
        }],
      };
    },
  };
  return db;
}

test('no lease given: idgen_acquire gets no lease argument (the server default); a lease given is sent', async () => {
  const db = fakeDb({ windowMs: 60000 });
  const reg = new Registry(db, { writer: 'w' });
  await reg.snowflake();
  const a = db.sent.find((q) => q.text.includes('idgen_acquire'));
  assert.deepEqual(a.values, ['snowflake', 'w', 'app']);
  assert.match(a.text, /idgen_acquire\(\$1::pg_catalog\.text, \$2::pg_catalog\.text, pool => \$3::pg_catalog\.text\)/);
  await reg.xid12({ lease: 90 });
  const b = db.sent.filter((q) => q.text.includes('idgen_acquire'))[1];
  assert.deepEqual(b.values, ['xid12', 'w', '90 seconds', 'app']);
  await reg.close();
});

test('a statement that never comes back is abandoned after timeout: RegistryUnavailable', async () => {
  const db = fakeDb();
  db.hang = true;
  const reg = new Registry(db, { timeout: 0.3 });
  const t0 = performance.now();
  // abandoned by the timeout's timer: before a timer of 301 ms armed after the call
  const outcome = await settlesWithin(() => reg.snowflake(), 301);
  assert.notEqual(outcome, 'late', 'the statement outlasted the timeout');
  assert.ok(outcome.error instanceof RegistryUnavailable && /no answer within 0.3 s/.test(outcome.error.message), String(outcome.error));
  const took = performance.now() - t0;
  assert.ok(took >= 290, `took ${took} ms`); // a timer never fires early
  // nothing to release: close() settles before any timer
  assert.notEqual(await settlesWithin(() => reg.close(), 1), 'late');
});

test('a cut link: ids stop at the window end within renewWait, none outside it, and resume after', async () => {
  const db = fakeDb({ windowMs: 600 });
  const reg = new Registry(db, { writer: 'cut', timeout: 2, renewWait: 0.2 });
  const g = await reg.snowflake();
  const hiMs = g.grant.hiUs / 1000;
  db.hang = true; // the renewal at half the window never answers
  const ids = [];
  let err;
  let waited = 0;
  // ids until the first error: outcomes only (how long the calls took is the machine's)
  for (;;) {
    const t0 = performance.now();
    try {
      ids.push(await g.nextId());
    } catch (e) {
      err = e;
      waited = performance.now() - t0;
      break;
    }
    if (ids.length % 200 === 0) await sleep(1);
  }
  assert.ok(err instanceof RegistryUnavailable, String(err));
  assert.match(err.message, /could not be renewed, so no id is made/);
  assert.ok(waited >= 190, `one call waited ${waited} ms (renewWait 200)`); // a timer never fires early
  assert.ok(ids.length > 0);
  for (const id of ids) {
    assert.equal(snowflakeParts(id).worker, 5);
    assert.ok(Number(g.time(id).getTime()) < hiMs, 'inside the window');
  }
  // the bound, on an idle path: a later call settles (RegistryUnavailable) before a timer of
  // renewWait + 1 ms armed after it, by the order of the timers, not by the machine's speed
  const later = await settlesWithin(() => g.nextId(), 201);
  assert.notEqual(later, 'late', 'a later call outlasted renewWait');
  assert.ok(later.error instanceof RegistryUnavailable, String(later.error ?? later.value));
  // the link is back: the next renewal (after the stuck one is abandoned at timeout) brings a window
  db.hang = false;
  let id;
  // (the cap ends a hang only: ids that never resume are a bug, not a slow machine)
  for (const t0 = performance.now(); id === undefined && performance.now() - t0 < 60000;) {
    try {
      id = await g.nextId();
    } catch (e) {
      assert.ok(e instanceof RegistryUnavailable, String(e));
      await sleep(100);
    }
  }
  assert.ok(id !== undefined && id > ids.at(-1), 'ids resume, increasing');
  db.hang = true;
  // its releases hang: close() gives up at its timer of the timeout (2 s), armed inside it
  assert.notEqual(await settlesWithin(() => reg.close(), 2001), 'late', 'close() outlasted the timeout');
});

test('a fenced acquire throws RegistryFenced with until; a lost grant (55000, 42704) is replaced', async () => {
  const db = fakeDb({ windowMs: 300 });
  const reg = new Registry(db, { writer: 'f' });
  db.refuse = [{ match: /idgen_acquire/, code: 'IG001', message: "the writer registry grants no snowflake slot in pool 'app' until 2026-12-04T10:35:12.345678Z" }];
  await assert.rejects(reg.snowflake(), (e) => e instanceof RegistryFenced && e.until.toISOString() === '2026-12-04T10:35:12.346Z');
  const g = await reg.snowflake();
  for (const code of ['55000', '42704']) {
    const first = g.grant.grantId;
    db.refuse = [{ match: /idgen_renew/, code, message: 'lost' }];
    await sleep(350); // past the window: the renewal finds the grant lost, a new one is acquired
    const id = await g.nextId();
    assert.notEqual(g.grant.grantId, first, `${code}: a new grant`);
    assert.equal(snowflakeParts(id).worker, 5);
  }
  // the new grant's acquire refused: the id call gets the refusal's class
  db.refuse = [{ match: /idgen_renew/, code: '55000', message: 'lost' },
    { match: /idgen_acquire/, code: 'IG001', message: "the writer registry grants no snowflake slot in pool 'app' until 2027-01-01T00:00:00.000000Z", keep: true }];
  await sleep(350);
  await assert.rejects(g.nextId(), (e) => e instanceof RegistryFenced && e.until.getTime() === Date.UTC(2027, 0, 1));
  assert.equal(g.grant, null);
  await reg.close();
});
