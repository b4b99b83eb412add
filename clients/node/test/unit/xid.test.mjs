// Xid values and the XidGenerator: no server needed.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { Xid, XidError, XidGenerator, machineFromHostname } from '../../dist/index.js';

const ALPHABET = '0123456789abcdefghijklmnopqrstuv';

// base32hex of 12 bytes, bit by bit (independent of the package's codec)
function referenceText(b) {
  const bits = [...b].map((x) => x.toString(2).padStart(8, '0')).join('') + '0000';
  let out = '';
  for (let i = 0; i < 100; i += 5) out += ALPHABET[parseInt(bits.slice(i, i + 5), 2)];
  return out;
}

test('known vectors: zero, all ones, rs/xid documentation id', () => {
  assert.equal(String(new Xid(new Uint8Array(12))), '00000000000000000000');
  assert.equal(String(new Xid(new Uint8Array(12).fill(255))), 'vvvvvvvvvvvvvvvvvvvg');
  const raw = Buffer.from('4d88e15b60f486e428412dc9', 'hex');
  const x = Xid.parse('9m4e2mr0ui3e8a215n4g');
  assert.deepEqual(Buffer.from(x.bytes), raw);
  assert.ok(Xid.parse('9M4E2MR0UI3E8A215N4G').equals(x));
  assert.equal(Xid.parse('9M4E2MR0UI3E8A215N4G').toString(), '9m4e2mr0ui3e8a215n4g');
  assert.equal(x.time.toISOString(), '2011-03-22T17:50:19.000Z');
  assert.equal(x.unixSeconds, 0x4d88e15b);
  assert.deepEqual(Buffer.from(x.machine), Buffer.from('60f486', 'hex'));
  assert.equal(x.machineId, 0x60f486);
  assert.equal(x.pid, 0xe428);
  assert.equal(x.counter, 0x412dc9);
  assert.ok(Xid.fromParts(0x4d88e15b, Buffer.from('60f486', 'hex'), 0xe428, 0x412dc9).equals(x));
  assert.ok(Xid.fromParts(x.time, 0x60f486, 0xe428, 0x412dc9).equals(x));
  assert.equal(inspect(x), "Xid('9m4e2mr0ui3e8a215n4g')");
  assert.equal(JSON.stringify({ id: x }), '{"id":"9m4e2mr0ui3e8a215n4g"}');
  assert.equal(`${x}`, '9m4e2mr0ui3e8a215n4g');
  assert.equal(x.toPostgres(), '9m4e2mr0ui3e8a215n4g');
  assert.ok(Xid.fromBytes(raw).equals(x));
  assert.ok(Xid.from(raw).equals(x) && Xid.from(x) === x && Xid.from('9m4e2mr0ui3e8a215n4g').equals(x));
});

const BAD = [
  ['', 'the text has 0 characters'],
  ['0000000000000000000', 'the text has 19 characters'],
  ['000000000000000000000', 'the text has 21 characters'],
  ['0000000000w000000000', 'Character 11 is outside'],
  ['000000000 0000000000', 'Character 10 is outside'],
  ['000000000\x000000000000', 'Character 10 is outside'],
  ['000000000+0000000000', 'Character 10 is outside'],
  ['00000000000000000001', 'the last character must be 0 or g'],
  ['0000000000000000000v', 'the last character must be 0 or g'],
  ['0000000000000000000é', 'Character 20 is outside'],
  ['000000000000000000é', 'Character 19 is outside'], // 19 characters in 20 bytes, as the server counts
  ['000000000000000000\u212a0', 'Character 19 is outside'], // the Kelvin sign lowercases to k
  [' 0000000000000000000', 'leading and trailing spaces are not allowed'],
  ['0000000000000000000\n', 'leading and trailing spaces are not allowed'],
];

test('bad text: an error that names the value and says why', () => {
  for (const [text, why] of BAD) {
    assert.throws(() => Xid.parse(text), (e) => {
      assert.ok(e instanceof XidError && e instanceof TypeError, e);
      assert.ok(e.message.startsWith(`invalid input syntax for type xid12: "${text}": `), e.message);
      assert.ok(e.message.toLowerCase().includes(why.toLowerCase()), `${e.message} / ${why}`);
      assert.ok(e.message.endsWith(e.detail));
      return true;
    });
    assert.equal(Xid.isValid(text), false);
  }
  assert.throws(() => Xid.parse('x'.repeat(100)), /invalid input syntax for type xid12: "x{40}\.\.\." \(100 characters\): An xid12 is 20 base32hex characters; the text has 100 characters\./);
});

test('bad bytes and types', () => {
  for (const n of [0, 11, 13]) {
    assert.throws(() => Xid.fromBytes(new Uint8Array(n)), new RegExp(`exactly 12 bytes; got ${n}`));
  }
  for (const bad of [null, undefined, 5, 1.5, ['a'], {}]) {
    assert.throws(() => new Xid(bad), XidError);
  }
  assert.throws(() => Xid.parse(5), /xid12 text is a string, not number/);
});

test('random round trips match the reference codec; accepted text is canonical', () => {
  for (let i = 0; i < 2000; i++) {
    const b = randomBytes(12);
    const x = Xid.fromBytes(b);
    assert.equal(x.toString(), referenceText(b));
    assert.deepEqual(Buffer.from(x.bytes), b);
    assert.ok(Xid.parse(x.toString().toUpperCase()).equals(x));
    assert.ok(Xid.parse(x.toString()).equals(x));
  }
});

test('order: text order, compare, < and sort agree with byte order', () => {
  const xs = Array.from({ length: 500 }, () => Xid.fromBytes(randomBytes(12)));
  const byBytes = [...xs].sort((a, b) => Buffer.compare(Buffer.from(a.bytes), Buffer.from(b.bytes)));
  assert.deepEqual([...xs].sort(Xid.compare).map(String), byBytes.map(String));
  for (let i = 1; i < byBytes.length; i++) {
    assert.ok(byBytes[i - 1] < byBytes[i]);
    assert.equal(byBytes[i - 1].compare(byBytes[i]), -1);
    assert.equal(byBytes[i].compare(byBytes[i - 1]), 1);
  }
  assert.equal(xs[0].compare(Xid.parse(xs[0].toString())), 0);
});

test('minFor / maxFor: the whole second, fractions rounded down, range errors', () => {
  const d = new Date('2026-07-01T12:34:56.789Z');
  const lo = Xid.minFor(d);
  const hi = Xid.maxFor(d);
  assert.equal(lo.unixSeconds, Math.floor(d.getTime() / 1000));
  assert.equal(hi.unixSeconds, lo.unixSeconds);
  assert.equal(lo.machineId + lo.pid + lo.counter, 0);
  assert.equal(hi.machineId, 0xffffff); assert.equal(hi.pid, 0xffff); assert.equal(hi.counter, 0xffffff);
  assert.throws(() => Xid.minFor(new Date(-500)), /unix second -1 is outside 1970-01-01/);
  assert.equal(Xid.maxFor(new Date(Date.UTC(2106, 1, 7, 6, 28, 15))).unixSeconds, 0xffffffff);
  assert.throws(() => Xid.minFor(new Date(Date.UTC(2106, 1, 7, 6, 28, 16))), /timestamp out of range for xid12/);
  assert.throws(() => Xid.minFor(new Date(NaN)), XidError);
});

test('fromParts range errors', () => {
  assert.throws(() => Xid.fromParts(0, 0x1000000, 0, 0), /machine id 16777216 is outside/);
  assert.throws(() => Xid.fromParts(0, new Uint8Array(2), 0, 0), /3 bytes, got 2/);
  assert.throws(() => Xid.fromParts(0, 0, 65536, 0), /pid 65536 is outside/);
  assert.throws(() => Xid.fromParts(0, 0, 0, -1), /counter -1 is outside/);
  assert.throws(() => Xid.fromParts(2 ** 32, 0, 0, 0), /unix second 4294967296/);
});

test('machine id: md5 of the host name', () => {
  const want = createHash('md5').update(hostname()).digest().subarray(0, 3);
  assert.deepEqual(Buffer.from(machineFromHostname()), want);
  assert.equal(new XidGenerator().new().machineId, want.readUIntBE(0, 3));
  assert.equal(Xid.new().machineId, want.readUIntBE(0, 3));
  assert.equal(Xid.new().pid, process.pid & 0xffff);
});

function fixedClock(values) {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)];
}

test('generator: fields, counter increments', () => {
  const g = new XidGenerator({ machine: 0x123456, pid: 0x789a, counterStart: 5, clock: () => 1700000000.9 });
  const a = g.new();
  const b = g.new();
  assert.equal(a.unixSeconds, 1700000000);
  assert.equal(a.machineId, 0x123456); assert.equal(a.pid, 0x789a);
  assert.equal(a.counter, 5); assert.equal(b.counter, 6);
  assert.ok(a < b);
  // the generator's text agrees with the byte codec
  assert.equal(a.toString(), Xid.fromParts(1700000000, 0x123456, 0x789a, 5).toString());
});

test('generator: a counter that wraps within a second borrows the next second', () => {
  const g = new XidGenerator({ machine: 1, pid: 2, counterStart: 0xffffff, clock: () => 1000 });
  const a = g.new();
  const b = g.new();
  assert.equal(a.counter, 0xffffff); assert.equal(b.counter, 0);
  assert.equal(b.unixSeconds, 1001);
  assert.ok(a < b);
});

test('generator: a clock that steps back keeps the last second', () => {
  const g = new XidGenerator({ machine: 1, pid: 2, counterStart: 0, clock: fixedClock([2000, 1500, 1999, 2001]) });
  const xs = [g.new(), g.new(), g.new(), g.new()];
  assert.deepEqual(xs.map((x) => x.unixSeconds), [2000, 2000, 2000, 2001]);
  for (let i = 1; i < xs.length; i++) assert.ok(xs[i - 1] < xs[i]);
});

test('generator: a lower machine id within a second borrows a second', () => {
  const g = new XidGenerator({ machine: 9, pid: 2, counterStart: 0, clock: () => 3000 });
  const a = g.new();
  g.setMachine(3);
  const b = g.new();
  assert.equal(b.unixSeconds, 3001);
  assert.ok(a < b);
});

test('generator: the end of time is an error, not a wrap', () => {
  const g = new XidGenerator({ machine: 1, pid: 1, counterStart: 0xffffff, clock: () => 0xffffffff });
  g.new();
  assert.throws(() => g.new(), /timestamp out of range for xid12/);
  assert.throws(() => new XidGenerator({ clock: () => -1 }).new(), /unix second -1/);
});

test('generator: ids strictly increase whatever the clock does', () => {
  let t = 5000;
  const g = new XidGenerator({ machine: 7, pid: 7, counterStart: 0xfffff0, clock: () => t });
  let last = g.new();
  for (let i = 0; i < 20000; i++) {
    t += Math.floor(Math.random() * 7) - 3;
    const x = g.new();
    assert.ok(last < x, `${last} < ${x}`);
    last = x;
  }
});
