// Snowflake decoders and generator, rapkey rules: no server needed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_EPOCH_MS, Snowflake, SnowflakeClockError, SnowflakeError, rapkey, RapkeyError, snowflakeFromParts,
  snowflakeMax, snowflakeMin, snowflakeParts, snowflakeSequence, snowflakeTime, snowflakeUnixMs, snowflakeWorker,
} from '../../dist/index.js';

test('snowflake layout and decoders (bigint and decimal text)', () => {
  const id = (123456789n << 22n) | (513n << 12n) | 77n;
  assert.deepEqual(snowflakeParts(id), { msSinceEpoch: 123456789, worker: 513, sequence: 77 });
  assert.deepEqual(snowflakeParts(String(id)), snowflakeParts(id));
  assert.equal(snowflakeWorker(id), 513);
  assert.equal(snowflakeSequence(id), 77);
  assert.equal(snowflakeUnixMs(id), DEFAULT_EPOCH_MS + 123456789);
  assert.equal(snowflakeTime(id).getTime(), DEFAULT_EPOCH_MS + 123456789);
  assert.equal(snowflakeTime(id, 0).getTime(), 123456789);
  assert.equal(snowflakeFromParts(123456789, 513, 77), id);
  const d = new Date(DEFAULT_EPOCH_MS + 1000);
  assert.equal(snowflakeMin(d), 1000n << 22n);
  assert.equal(snowflakeMax(d), (1000n << 22n) | 0x3fffffn);
  assert.throws(() => snowflakeParts(-1n), /invalid snowflake id -1: snowflake ids are never negative/);
  assert.throws(() => snowflakeParts(1n << 63n), /does not fit in a bigint/);
  assert.throws(() => snowflakeParts('12a'), SnowflakeError);
  assert.throws(() => snowflakeMin(new Date(DEFAULT_EPOCH_MS - 1)), /out of range/);
  assert.throws(() => snowflakeFromParts(0, 1024, 0), /worker id 1024 is outside/);
});

test('snowflake generator: layout, increasing, options checked', () => {
  let now = DEFAULT_EPOCH_MS + 5000;
  const g = new Snowflake({ workerId: 9, clock: () => now });
  const a = g.nextId();
  assert.equal(a, (5000n << 22n) | (9n << 12n));
  assert.equal(g.nextId(), a + 1n);
  now += 1;
  assert.equal(g.nextId(), (5001n << 22n) | (9n << 12n));
  assert.equal(g.time(a).getTime(), DEFAULT_EPOCH_MS + 5000);
  assert.throws(() => new Snowflake({ workerId: 1024 }), /outside the range 0 .. 1023/);
  assert.throws(() => new Snowflake({ workerId: 1, maxBackwardMs: -1 }), /maxBackwardMs/);
  assert.throws(() => new Snowflake({ workerId: 1, clock: () => DEFAULT_EPOCH_MS - 1 }).nextId(), /before the snowflake epoch/);
});

test('snowflake generator waits out a used-up millisecond', () => {
  let now = DEFAULT_EPOCH_MS + 7000;
  const sleeps = [];
  const g = new Snowflake({ workerId: 1, clock: () => now, sleep: (ms) => { sleeps.push(ms); now += 1; } });
  const ids = Array.from({ length: 4097 }, () => g.nextId());
  assert.equal(new Set(ids).size, 4097);
  assert.deepEqual(sleeps, [1]);
  assert.equal(snowflakeParts(ids[4096]).msSinceEpoch, 7001);
  assert.equal(snowflakeParts(ids[4095]).sequence, 4095);
});

test('snowflake generator: a clock step back waits up to the bound, then errors', () => {
  let now = DEFAULT_EPOCH_MS + 10000;
  const g = new Snowflake({ workerId: 1, maxBackwardMs: 100, clock: () => now, sleep: (ms) => { now += ms; } });
  const a = g.nextId();
  now -= 50;
  const b = g.nextId(); // waited 50 ms
  assert.ok(b > a);
  now -= 500;
  assert.throws(() => g.nextId(), (e) => e instanceof SnowflakeClockError && /moved back 500 ms/.test(e.message));
  // the real clock: many ids, all distinct and increasing
  const real = new Snowflake({ workerId: 3 });
  let last = -1n;
  for (let i = 0; i < 50000; i++) {
    const id = real.nextId();
    assert.ok(id > last);
    last = id;
  }
});

test('rapkey: the spec vectors and the worked example', () => {
  for (const key of ['ord.cn.sh.202407.8842-2', 'usr.cn.10001-x', 'pay.us.ca.acme.202406.3311-h', 'ord.cn.sh.202407.58-~']) {
    assert.ok(rapkey.isValid(key), key);
    assert.equal(rapkey.validate(key), key);
    const body = key.slice(0, key.lastIndexOf('-'));
    assert.equal(rapkey.checkChar(body), key.at(-1));
    const [type, ...segments] = body.split('.');
    assert.equal(rapkey.build(type, ...segments), key);
    assert.equal(rapkey.build(` ${type.toUpperCase()} `, ...segments.map((s) => s.toUpperCase())), key);
    assert.equal(rapkey.normalize(`  ${key.toUpperCase()}\t`), key);
    assert.deepEqual(rapkey.parse(key), { type, segments, check: key.at(-1) });
  }
});

const BAD_KEYS = [
  ['', 'key is empty'],
  ['ord.cn.sh.202407.8842-3', "Wrong check character: expected '2', found '3'"],
  ['ord.cn.sh.202407.8842', "missing '-' before the check character"],
  ['ord-2', 'must be followed by at least one segment'],
  ['o.cn-2', 'too short: 1 letter'],
  ['ordersandmore.cn-2', 'too long: 13 letters'],
  ['Ord.cn-2', "character outside [a-z]: 'O' at position 1"],
  ['ord.c_n-2', `Segment 1 "c_n" has a character outside [a-z0-9]: '_' at position 2`],
  ['ord..cn-2', 'segment 1 is empty'],
  ['ord.a.b.c.d.e.f-2', 'too many segments: 6'],
  ['ord.cn-', "missing check character after '-'"],
  ['ord.cn-22', 'expected one check character'],
  ['ord.cn-!', 'is not one of [0-9a-z~]'],
  ['ord.' + 'a'.repeat(33) + '-2', 'is too long: 33 characters'],
  ['ord.' + 'a'.repeat(130) + '-2', 'key is too long: 136 characters'],
];

test('rapkey: errors say why; isValid never throws', () => {
  for (const [key, why] of BAD_KEYS) {
    assert.throws(() => rapkey.validate(key), (e) => e instanceof RapkeyError && e.message.toLowerCase().includes(why.toLowerCase()) || assert.fail(`${key}: ${e.message}`));
    assert.equal(rapkey.isValid(key), false);
  }
  assert.throws(() => rapkey.validate('ord.cn.sh.202407.8842-3'), (e) => e.checksum === true && e.expected === '2');
  for (const v of [null, undefined, 5, {}]) assert.equal(rapkey.isValid(v), false);
  assert.throws(() => rapkey.build('ord'), /at least one segment/);
  assert.throws(() => rapkey.build('ord', 'a', 'b', 'c', 'd', 'e', 'f'), /too many segments: 6/i);
  assert.throws(() => rapkey.build('ord', 'c.n'), /Segment 1 "c.n" has a character outside/);
  assert.throws(() => rapkey.checkChar('ord'), /at least one segment/);
});

test('rapkey: prefix ranges hold exactly the keys under the prefix', () => {
  assert.deepEqual(rapkey.prefixRange(' ORD.cn.sh.202407 '), ['ord.cn.sh.202407-', 'ord.cn.sh.202407/']);
  assert.deepEqual(rapkey.prefixRange('ord'), ['ord-', 'ord/']);
  assert.throws(() => rapkey.prefixRange('ord.'), /segment 1 is empty/i);
  const [lo, hi] = rapkey.prefixRange('ord.cn.sh.202407');
  const inside = [rapkey.build('ord', 'cn', 'sh', '202407'), rapkey.build('ord', 'cn', 'sh', '202407', '1'), rapkey.build('ord', 'cn', 'sh', '202407', 'zz')];
  const outside = [rapkey.build('ord', 'cn', 'sh', '2024071'), rapkey.build('ord', 'cn', 'sh', '202408'), rapkey.build('ord', 'cn', 'sh', '20240')];
  for (const k of inside) assert.ok(lo <= k && k < hi, k);
  for (const k of outside) assert.ok(!(lo <= k && k < hi), k);
});

test('rapkey: every single substitution and adjacent transposition is caught', () => {
  const key = 'pay.us.ca.acme.202406.3311-h';
  const symbols = '0123456789abcdefghijklmnopqrstuvwxyz.~';
  let tried = 0;
  for (let i = 0; i < key.length; i++) {
    if (key[i] === '-') continue;
    for (const c of symbols) {
      if (c === key[i]) continue;
      const k = key.slice(0, i) + c + key.slice(i + 1);
      tried++;
      assert.equal(rapkey.isValid(k), false, k);
    }
    if (i + 1 < key.length && key[i + 1] !== '-' && key[i] !== key[i + 1] && key[i] !== '-') {
      const k = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
      assert.equal(rapkey.isValid(k), false, k);
    }
  }
  assert.ok(tried > 900);
});
