// The shared test vectors of the repository (tests/vectors/*.json), run against this package:
// every file there has a runner here, so a new vector file fails this test until it does.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as pkg from '../../dist/index.js';
import {
  ClockBeforeWindow, SnowflakeClockError, SnowflakeGrantState, StepKind, XidGrantState, snowflakeParts, Xid, rapkey,
  snowflakeWorker, snowflakeSequence, snowflakeUnixMs, RegistryError, RegistryFenced, registryErrorOf, fencedUntil,
} from '../../dist/index.js';
import { EDITION_QUERY } from '../../dist/catalog.js';
import * as protocol from '../../dist/protocol.js';

const DIR = fileURLToPath(new URL('../../../../tests/vectors/', import.meta.url));

/** JSON.parse that keeps integers beyond 2^53 exact (as bigint). */
export function parseExact(text) {
  const marked = text.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, '$1"#big:$2"');
  return JSON.parse(marked, (_k, v) => (typeof v === 'string' && v.startsWith('#big:') ? BigInt(v.slice(5)) : v));
}

function xidHex(x) {
  return Buffer.from(x.bytes).toString('hex');
}

function runGrantCase(c) {
  const snow = c.kind === 'snowflake';
  const st = snow
    ? new SnowflakeGrantState(Number(c.epoch_ms), Number(c.max_wait))
    : new XidGrantState({ pid: c.pid, counterStart: 0, maxWait: Number(c.max_wait) });
  let slot = c.slot;
  let lo = Number(c.lo);
  let hi = Number(c.hi);
  st.bind(slot, lo, hi);
  let last = null;
  const check = (where) => {
    const id = st.id;
    if (snow) {
      const p = snowflakeParts(id);
      assert.equal(p.worker, slot, `${where}: slot`);
      assert.ok(p.msSinceEpoch >= lo && p.msSinceEpoch < hi, `${where}: inside the window`);
      assert.ok(last === null || id > last, `${where}: increasing`);
    } else {
      assert.equal(id.machineId, slot, `${where}: slot`);
      assert.ok(id.unixSeconds >= lo && id.unixSeconds < hi, `${where}: inside the window`);
      assert.ok(last === null || last < id, `${where}: increasing`);
    }
    last = id;
  };
  c.steps.forEach((s, n) => {
    const where = `${c.name}, step ${n}`;
    if (s.rebind) {
      ({ slot } = s.rebind);
      lo = Number(s.rebind.lo);
      hi = Number(s.rebind.hi);
      st.bind(slot, lo, hi);
      return;
    }
    const repeat = s.repeat ?? 1;
    for (let i = 0; i < repeat; i++) {
      if (!snow) st.counter = (s.counter + i) % 2 ** 24;
      const lastCall = i === repeat - 1;
      let kind;
      let error = null;
      try {
        kind = st.step(Number(s.now));
      } catch (e) {
        error = e;
      }
      if (!lastCall) {
        assert.equal(error, null, `${where}: call ${i} threw ${error}`);
        assert.equal(kind, StepKind.Id, `${where}: call ${i} made no id`);
        check(where);
        continue;
      }
      const e = s.expect;
      if (e.error) {
        assert.ok(error, `${where}: expected error ${e.error}`);
        const cls = { clock_before_window: ClockBeforeWindow, clock_moved_back: SnowflakeClockError }[e.error];
        assert.ok(error instanceof cls, `${where}: ${error}`);
        continue;
      }
      assert.equal(error, null, `${where}: ${error}`);
      if ('id' in e) {
        assert.equal(kind, StepKind.Id, where);
        check(where);
        if (snow) assert.equal(st.id, BigInt(e.id), where);
        else assert.equal(xidHex(st.id), e.id, where);
      } else if ('wait_until' in e) {
        assert.equal(kind, StepKind.Wait, where);
        assert.equal(st.waitUntil, Number(e.wait_until), where);
      } else if (e.renew) {
        assert.equal(kind, StepKind.Renew, where);
      } else {
        assert.fail(`${where}: unknown expectation ${JSON.stringify(e)}`);
      }
    }
  });
}

/** The one-line form of an expected error: message, then ": " and the DETAIL. */
function expected(c) {
  return c.detail == null ? c.message : `${c.message}: ${c.detail}`;
}

function throwsWords(fn, c, where) {
  assert.throws(fn, (e) => {
    assert.equal(e.message, expected(c), where);
    return true;
  });
}

function runXid12(d) {
  let n = 0;
  for (const c of d.valid) {
    const x = Xid.parse(c.input);
    assert.equal(x.toString(), c.text);
    assert.equal(Buffer.from(x.bytes).toString('hex'), c.bytes);
    assert.equal(x.unixSeconds, c.unix_seconds);
    assert.equal(Buffer.from(x.machine).toString('hex'), c.machine);
    assert.equal(x.pid, c.pid);
    assert.equal(x.counter, c.counter);
    assert.ok(Xid.fromBytes(Buffer.from(c.bytes, 'hex')).equals(x));
    n++;
  }
  for (const c of d.invalid_text) {
    throwsWords(() => Xid.parse(c.text), c, JSON.stringify(c.text));
    assert.equal(Xid.isValid(c.text), false);
    n++;
  }
  for (const c of d.invalid_bytes) {
    throwsWords(() => Xid.fromBytes(Buffer.from(c.bytes, 'hex')), c, c.bytes);
    n++;
  }
  for (const c of d.parts) {
    const machine = Buffer.from(c.machine, 'hex');
    const make = () => Xid.fromParts(Number(c.unix_seconds), machine, Number(c.pid), Number(c.counter));
    if (c.text !== undefined) assert.equal(make().toString(), c.text);
    else throwsWords(make, c, JSON.stringify(c));
    n++;
  }
  return n;
}

function runRapkey(d) {
  let n = 0;
  for (const c of d.valid) {
    assert.equal(rapkey.checkChar(c.body), c.check);
    assert.equal(`${c.body}-${c.check}`, c.key);
    assert.ok(rapkey.isValid(c.key));
    const p = rapkey.parse(c.key);
    assert.equal(rapkey.build(p.type, ...p.segments), c.key);
    n++;
  }
  for (const c of d.invalid_bodies) {
    throwsWords(() => rapkey.checkChar(c.body), c, JSON.stringify(c.body));
    n++;
  }
  for (const c of d.invalid_keys) {
    throwsWords(() => rapkey.validate(c.key), c, JSON.stringify(c.key));
    assert.equal(rapkey.isValid(c.key), false);
    n++;
  }
  for (const c of d.normalize) {
    if (c.key !== undefined) assert.equal(rapkey.normalize(c.input), c.key);
    else throwsWords(() => rapkey.normalize(c.input), c, JSON.stringify(c.input));
    n++;
  }
  for (const c of d.build) {
    if (c.key !== undefined) assert.equal(rapkey.build(c.type, ...c.segments), c.key);
    else throwsWords(() => rapkey.build(c.type, ...c.segments), c, JSON.stringify(c));
    n++;
  }
  for (const c of d.prefix_range) {
    if (c.range !== undefined) assert.deepEqual(rapkey.prefixRange(c.prefix), c.range);
    else throwsWords(() => rapkey.prefixRange(c.prefix), c, JSON.stringify(c.prefix));
    n++;
  }
  return n;
}

function runSnowflake(d) {
  const epoch = Number(d.epoch);
  let n = 0;
  for (const c of d.layouts) {
    const id = BigInt(c.id);
    assert.deepEqual(snowflakeParts(id), { msSinceEpoch: Number(c.ms_since_epoch), worker: c.worker, sequence: c.sequence });
    assert.equal(snowflakeWorker(String(id)), c.worker);
    assert.equal(snowflakeSequence(id), c.sequence);
    assert.equal(snowflakeUnixMs(id, epoch), Number(c.unix_ms));
    n++;
  }
  for (const c of d.invalid_ids) {
    throwsWords(() => snowflakeWorker(BigInt(c.id)), c, String(c.id));
    n++;
  }
  return n;
}

/** Unix ms of an RFC 3339 UTC moment with microseconds, rounded up to the millisecond (as RegistryFenced.until). */
function ceilMs(text) {
  const m = /^(.*T\d\d:\d\d:\d\d)\.(\d{6})Z$/.exec(text);
  assert.ok(m, `an RFC 3339 moment with microseconds: ${text}`);
  return Date.parse(`${m[1]}Z`) + Math.ceil(Number(m[2]) / 1000);
}

// Each SQLSTATE as node-postgres gives it (code, message, severity, detail) maps to the class the
// vector names, exported from the package, a subclass of RegistryError; each fenced message
// gives its `until`, through the error mapping and fencedUntil alike.
function runRegistryErrors(d) {
  let n = 0;
  const classes = new Set();
  for (const c of d.conditions) {
    const Cls = pkg[c.class];
    assert.equal(typeof Cls, 'function', `${c.class} is exported`);
    assert.ok(Cls.prototype instanceof RegistryError, `${c.class} is a RegistryError`);
    const e = registryErrorOf({ code: c.sqlstate, message: `refused (${c.condition})`, severity: 'ERROR', detail: 'why' });
    assert.ok(e instanceof Cls, `${c.sqlstate} gives ${c.class}, not ${e?.name}`);
    assert.equal(e.constructor, Cls, `${c.sqlstate}: exactly ${c.class}`);
    assert.equal(e.name, c.class);
    assert.equal(e.sqlstate, c.sqlstate);
    assert.equal(e.message, `refused (${c.condition}) (DETAIL: why)`);
    classes.add(Cls);
    n++;
  }
  // distinct conditions, distinct classes (grant_missing is grant_lost on purpose)
  assert.equal(classes.size, new Set(d.conditions.map((c) => c.class)).size);
  for (const code of ['XX000', '22023', '55P03', 'P0001']) {
    const e = registryErrorOf({ code, message: 'other', severity: 'ERROR' });
    assert.equal(e.constructor, RegistryError, `${code} is a plain RegistryError`);
  }
  for (const code of ['08006', '57P01']) assert.equal(registryErrorOf({ code, message: 'gone', severity: 'FATAL' }), null);
  assert.equal(registryErrorOf(new Error('Connection terminated unexpectedly')), null);
  const fencedCode = d.conditions.find((c) => c.class === 'RegistryFenced').sqlstate;
  for (const f of d.fenced_messages) {
    const want = f.until === null ? null : ceilMs(f.until);
    const got = (u) => (u === null ? null : u.getTime());
    assert.equal(got(fencedUntil(f.message)), want, f.message);
    const e = registryErrorOf({ code: fencedCode, message: f.message, severity: 'ERROR', detail: 'At ... (DETAIL)' });
    assert.ok(e instanceof RegistryFenced);
    assert.equal(got(e.until), want, `through the mapping: ${f.message}`);
    assert.equal(got(new RegistryFenced(f.message).until), want);
    n++;
  }
  return n + runWords(d);
}

// The words of the registry's and the generators' errors (face `typescript`): every template,
// rendered with sample values, is what protocol.ts says for them; then a few errors raised.
const PLACEHOLDER = /\{(\w+)(?::(\w+))?\}/g;
const FORMS = {
  at: (ms) => new Date(ms).toISOString(), s: (v) => String(v), s1: (v) => v.toFixed(1),
  s3: (v) => v.toFixed(3), int: (v) => String(v), '': (v) => String(v),
};
const renderWords = (t, values) => t.replace(PLACEHOLDER, (_m, name, form) => FORMS[form ?? ''](values[name]));
// Each entry's function in protocol.ts (its placeholders in the template's order).
const WORD_FUNCTIONS = {
  server_refusal: 'serverRefusal', server_refusal_no_detail: 'serverRefusalNoDetail', needs_0_7_0: 'needs070',
  not_installed: 'notInstalled', closed: 'closed', unreachable: 'unreachable', no_answer: 'noAnswer',
  window_unrenewed: 'windowUnrenewed', grant_unacquired: 'grantUnacquired', window_unreachable: 'windowUnreachable',
  grant_unreachable: 'grantUnreachable', grant_lost_again: 'grantLostAgain', clock_before_window: 'clockBeforeWindow',
  clock_behind_server: 'clockBehindServer', clock_never_reached: 'clockNeverReached',
  clock_ahead_of_window: 'clockAheadOfWindow',
};
// The order of each function's arguments, where it is not the template's.
const ARGUMENTS = {
  clock_before_window: ['behind', 'start', 'kind', 'slot', 'max_wait'],
  clock_ahead_of_window: ['ahead', 'now', 'past', 'hi', 'lease'],
};

function runWords(d) {
  const at = d.forms.at;
  assert.equal(FORMS.at(1800000000500), at.typescript);
  for (const form of ['s', 's1', 's3']) {
    for (const [ms, shown] of d.forms[form].examples_ms) assert.equal(FORMS[form](ms / 1000), shown, `${form} ${ms}`);
  }
  for (const [v, shown] of d.forms.int.examples) assert.equal(FORMS.int(v), shown);
  let n = 0;
  for (const w of d.words) {
    const fn = WORD_FUNCTIONS[w.name];
    if (w.typescript === null) {
      assert.equal(fn, undefined, `${w.name}: the vectors say this client has no such error`);
      continue;
    }
    assert.ok(fn && typeof protocol[fn] === 'function', `no words for ${w.name}`);
    const spots = [...w.typescript.matchAll(PLACEHOLDER)];
    const values = {};
    spots.forEach(([, name, form], i) => {
      assert.ok(name in w.placeholders, `${w.name}: ${name} is not declared`);
      values[name] = { at: 1800000000500 + 1000 * i, s: 1.5 + i, s1: 1.26 + i, s3: 12.3456 + i, int: 7 + i }[form] ?? `<${name}>`;
    });
    const args = (ARGUMENTS[w.name] ?? spots.map(([, name]) => name)).map((name) => values[name]);
    assert.equal(protocol[fn](...args), renderWords(w.typescript, values), w.name);
    n++;
  }
  assert.equal(n, Object.keys(WORD_FUNCTIONS).length);
  // Raised: the state machine's clock_before_window and a server refusal.
  const words = Object.fromEntries(d.words.map((w) => [w.name, w.typescript]));
  const st = new SnowflakeGrantState(1288834974657, 5000);
  st.bind(5, 411165025343, 411165625343);
  assert.throws(() => st.step(1699999994999), (e) => e instanceof ClockBeforeWindow && e.message === renderWords(
    words.clock_before_window, { behind: 5.001, start: 1700000000000, kind: 'snowflake', slot: 5, max_wait: 5 }));
  const xs = new XidGrantState({ pid: 1, counterStart: 0, maxWait: 5 });
  xs.bind(66051, 1700000000, 1700000600);
  assert.throws(() => xs.step(1699999994), (e) => e.message === renderWords(
    words.clock_before_window, { behind: 6, start: 1700000000000, kind: 'xid12', slot: 66051, max_wait: 5 }));
  const e = registryErrorOf({ code: '42703', message: 'column "lo_t" does not exist', severity: 'ERROR' });
  assert.equal(e.message, renderWords(words.needs_0_7_0, { message: 'column "lo_t" does not exist' }));
  return n;
}

const RUNNERS = {
  'registry_errors.json': runRegistryErrors,
  'xid12.json': runXid12,
  'rapkey.json': runRapkey,
  'snowflake.json': runSnowflake,
  'grant_traces.json': (data) => {
    assert.ok(data.cases.length > 0);
    for (const c of data.cases) runGrantCase(c);
    return data.cases.length;
  },
};

const files = existsSync(DIR) ? readdirSync(DIR).filter((f) => f.endsWith('.json')).sort() : [];

// tests/vectors/edition_rule.sql: how every client finds the edition and its xid12 type; this
// client's EDITION_QUERY starts with it, byte for byte, then selects its own columns.
test('tests/vectors/edition_rule.sql', { skip: !existsSync(DIR) && 'not in the repository checkout' }, () => {
  const rule = readFileSync(DIR + 'edition_rule.sql', 'utf8')
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .trimEnd();
  assert.equal(rule.split('WITH c AS (').length, 2);
  assert.ok(EDITION_QUERY.replace(/^\n+/, '').startsWith(rule), 'EDITION_QUERY does not start with tests/vectors/edition_rule.sql');
});

test('the repository has shared vectors', { skip: !existsSync(DIR) && 'not in the repository checkout' }, () => {
  assert.ok(files.includes('grant_traces.json'));
});

// Vectors of what this client does not have, each with the reason; any other file needs a runner.
const NOT_HERE = {
  'edge_store.json': 'the SQLite file of an edge device: the Python and Rust clients have an EdgeStore, this one not',
  'edge_traces.json': 'the offline rule of an edge device: the Python and Rust clients have an EdgeStore, this one not',
};

for (const f of files) {
  test(`tests/vectors/${f}`, { skip: NOT_HERE[f] }, () => {
    const runner = RUNNERS[f];
    assert.ok(runner, `tests/vectors/${f} has no runner in clients/node/test/unit/vectors.test.mjs: add one`);
    const n = runner(parseExact(readFileSync(DIR + f, 'utf8')));
    assert.ok(n > 0);
  });
}

test('parseExact keeps big integers', () => {
  assert.deepEqual(parseExact('{"a": 1724551110456266752, "b": [1, 9007199254740993]}'), { a: 1724551110456266752n, b: [1, 9007199254740993n] });
  void Xid;
});
