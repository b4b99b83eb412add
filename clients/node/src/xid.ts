// The rs/xid layout (PostgreSQL's xid12) and an in-process generator (docs/formats.md §1, §2).
//
// Bytes, big-endian: 0-3 unix seconds, 4-6 machine id, 7-8 process id, 9-11 counter. Byte
// order is sort order is creation-second order. The text is 20 characters of lowercase
// base32hex (0-9a-v); the last one carries one bit and four zero bits, so only 0 and g end a
// canonical text. An Xid keeps its canonical text: comparing two texts (JavaScript's < on
// strings) is comparing the ids, so sorting, equality and Map keys need no bytes.

import { createHash, randomInt } from 'node:crypto';
import { hostname } from 'node:os';
import { threadId } from 'node:worker_threads';
import { invalidInput, oneLine, trimWhitespace } from './words.js';

export const XID_BYTES = 12;
export const XID_CHARS = 20;
export const MAX_XID_TIME = 0xffffffff;
export const MAX_MACHINE = 0xffffff;
export const MAX_PID = 0xffff;
export const MAX_COUNTER = 0xffffff;

const ALPHABET = '0123456789abcdefghijklmnopqrstuv';
const CANONICAL = /^[0-9a-v]{19}[0g]$/;
const RANGE_TEXT = '1970-01-01 00:00:00 .. 2106-02-07 06:28:15 UTC';
// char code -> 5-bit value (either case), -1 outside the alphabet
const VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 32; i++) {
  VALUE[ALPHABET.charCodeAt(i)] = i;
  VALUE[ALPHABET.toUpperCase().charCodeAt(i)] = i;
}
// two characters for each 10-bit value (the generator's hot path)
const PAIR: string[] = [];
for (let i = 0; i < 1024; i++) PAIR.push(ALPHABET[i >> 5] + ALPHABET[i & 31]);

/**
 * A value that is not an xid12: bad text, bad length, bad part. `message` is the server's
 * message, then ": " and its DETAIL (also in `detail`), the same words as the server's error.
 */
export class XidError extends TypeError {
  override name = 'XidError';
  /** The server's DETAIL for the same input, when it has one. */
  readonly detail: string | undefined;

  constructor(message: string, detail?: string) {
    super(oneLine(message, detail));
    this.detail = detail;
  }
}

const isSymbol = (c: string) => c.length === 1 && c.charCodeAt(0) < 128 && VALUE[c.charCodeAt(0)]! >= 0;

/** The server's DETAIL for a text it refuses (tests/vectors/xid12.json). */
function whyNotText(text: string): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  const chars = [...text];
  if (bytes === XID_CHARS && chars.every(isSymbol)) {
    return 'The last character must be 0 or g: its low 4 bits are unused and must be zero.';
  }
  if (trimWhitespace(text) !== text) return 'Leading and trailing spaces are not allowed.';
  if (bytes !== XID_CHARS && chars.length !== XID_CHARS) {
    return `An xid12 is ${XID_CHARS} base32hex characters; the text has ${chars.length} characters.`;
  }
  return `Character ${chars.findIndex((c) => !isSymbol(c)) + 1} is outside the base32hex alphabet 0-9, a-v.`;
}

/** The canonical (lowercase) text of an xid12 text in either case; XidError otherwise. */
function canonicalText(text: string): string {
  if (CANONICAL.test(text)) return text;
  const lower = text.toLowerCase();
  // toLowerCase maps a few non-ASCII characters to ASCII ones (the Kelvin sign to k): only
  // ASCII input is accepted, so compare lengths and check the original's characters.
  if (lower.length === XID_CHARS && CANONICAL.test(lower)) {
    let ok = true;
    for (let i = 0; i < XID_CHARS; i++) if (text.charCodeAt(i) > 127) ok = false;
    if (ok) return lower;
  }
  throw new XidError(invalidInput('xid12', text), whyNotText(text));
}

function encode(b: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < XID_BYTES; i++) {
    acc = (acc << 8) | b[i]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out + ALPHABET[(acc << (5 - bits)) & 31];
}

function decode(text: string): Uint8Array {
  const out = new Uint8Array(XID_BYTES);
  let acc = 0;
  let bits = 0;
  let j = 0;
  for (let i = 0; i < XID_CHARS; i++) {
    acc = (acc << 5) | VALUE[text.charCodeAt(i)]!;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[j++] = (acc >>> bits) & 255;
      acc &= (1 << bits) - 1;
    }
  }
  return out;
}

function timeField(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_XID_TIME) {
    throw new XidError(
      `timestamp out of range for xid12: unix second ${seconds} is outside ${RANGE_TEXT}`);
  }
  return seconds;
}

function unixSecond(date: Date | number, what: string): number {
  if (typeof date === 'number') return Math.floor(date);
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw new XidError(`${what} takes a valid Date or unix seconds`);
  }
  // Fractions round down, as the server's do (also before 1970).
  return Math.floor(date.getTime() / 1000);
}

function machineNumber(machine: number | Uint8Array): number {
  if (typeof machine === 'number') {
    if (!Number.isInteger(machine) || machine < 0 || machine > MAX_MACHINE) {
      throw new XidError(`xid12 machine id ${machine} is outside the range 0 .. ${MAX_MACHINE}`);
    }
    return machine;
  }
  if (machine instanceof Uint8Array) {
    if (machine.length !== 3) throw new XidError(`xid12 machine id must be 3 bytes, got ${machine.length}`);
    return (machine[0]! << 16) | (machine[1]! << 8) | machine[2]!;
  }
  throw new XidError('a machine id is a number (0 .. 16777215) or 3 bytes');
}

function checkInt(value: number, max: number, what: string): number {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new XidError(`xid12 ${what} ${value} is outside the range 0 .. ${max}`);
  }
  return value;
}

function fromFields(seconds: number, machine: number, pid: number, counter: number): Uint8Array {
  const b = new Uint8Array(XID_BYTES);
  b[0] = seconds >>> 24; b[1] = seconds >>> 16; b[2] = seconds >>> 8; b[3] = seconds;
  b[4] = machine >>> 16; b[5] = machine >>> 8; b[6] = machine;
  b[7] = pid >>> 8; b[8] = pid;
  b[9] = counter >>> 16; b[10] = counter >>> 8; b[11] = counter;
  return b;
}

const TRUSTED = Symbol('canonical xid12 text');

/**
 * An xid12 value. `new Xid(text | bytes)` or `Xid.parse` / `Xid.fromBytes`; `toString()` is the
 * lowercase text (also `toJSON()`, `valueOf()` and what node-postgres binds), `bytes` the 12 bytes.
 * `a < b` and `a.compare(b)` order ids like the server's btree; `a.equals(b)` compares values.
 */
export class Xid {
  /** The canonical lowercase text. */
  private readonly text: string;

  constructor(value: string | Uint8Array | Xid, trusted?: typeof TRUSTED) {
    if (typeof value === 'string') {
      this.text = trusted === TRUSTED ? value : canonicalText(value);
    } else if (value instanceof Xid) {
      this.text = value.text;
    } else if (value instanceof Uint8Array) {
      if (value.length !== XID_BYTES) {
        throw new XidError('invalid binary xid12 value', `An xid12 is exactly ${XID_BYTES} bytes; got ${value.length}.`);
      }
      this.text = encode(value);
    } else {
      throw new XidError(`an Xid is made from its text or its 12 bytes, not ${describe(value)}`);
    }
  }

  /** The Xid of a 20-character text in either case; XidError saying what is wrong otherwise. */
  static parse(text: string): Xid {
    if (typeof text !== 'string') throw new XidError(`xid12 text is a string, not ${describe(text)}`);
    return new Xid(text);
  }

  /** The Xid of exactly 12 bytes (a Buffer or any Uint8Array). */
  static fromBytes(bytes: Uint8Array): Xid {
    if (!(bytes instanceof Uint8Array)) throw new XidError(`xid12 bytes are a Uint8Array, not ${describe(bytes)}`);
    return new Xid(bytes);
  }

  /** An Xid from an Xid, its text or its 12 bytes. */
  static from(value: Xid | string | Uint8Array): Xid {
    return value instanceof Xid ? value : new Xid(value);
  }

  /** Whether a text is an xid12 text the server accepts (either case). */
  static isValid(text: unknown): boolean {
    if (typeof text !== 'string') return false;
    try {
      canonicalText(text);
      return true;
    } catch {
      return false;
    }
  }

  /** Like SQL `xid12_from_parts`: time (Date or unix seconds), machine (number or 3 bytes), pid, counter. */
  static fromParts(time: Date | number, machine: number | Uint8Array, pid: number, counter: number): Xid {
    const t = timeField(unixSecond(time, 'Xid.fromParts'));
    return new Xid(encode(fromFields(t, machineNumber(machine), checkInt(pid, MAX_PID, 'pid'),
      checkInt(counter, MAX_COUNTER, 'counter'))), TRUSTED);
  }

  /** The smallest id of the date's second (SQL `xid12_min`). */
  static minFor(time: Date | number): Xid {
    return new Xid(encode(fromFields(timeField(unixSecond(time, 'Xid.minFor')), 0, 0, 0)), TRUSTED);
  }

  /** The largest id of the date's second (SQL `xid12_max`). */
  static maxFor(time: Date | number): Xid {
    const t = timeField(unixSecond(time, 'Xid.maxFor'));
    return new Xid(encode(fromFields(t, MAX_MACHINE, MAX_PID, MAX_COUNTER)), TRUSTED);
  }

  /** A new id from this thread's default generator (see XidGenerator). */
  static new(): Xid {
    return (defaultGenerator ??= new XidGenerator()).new();
  }

  /** Orders two ids like the server (for Array.prototype.sort). */
  static compare(a: Xid, b: Xid): number {
    return a.text < b.text ? -1 : a.text > b.text ? 1 : 0;
  }

  compare(other: Xid): number {
    return Xid.compare(this, other);
  }

  equals(other: unknown): boolean {
    return other instanceof Xid && other.text === this.text;
  }

  toString(): string {
    return this.text;
  }

  toJSON(): string {
    return this.text;
  }

  /** The text, so that `a < b` compares ids and template strings give the text. */
  valueOf(): string {
    return this.text;
  }

  /** node-postgres binds what this returns: the text, sent untyped (the server reads an xid12). */
  toPostgres(): string {
    return this.text;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Xid('${this.text}')`;
  }

  /** The 12 bytes (a new array each time). */
  get bytes(): Uint8Array {
    return decode(this.text);
  }

  /** The creation second as unix seconds. */
  get unixSeconds(): number {
    const b = decode(this.text);
    return ((b[0]! << 24) >>> 0) + ((b[1]! << 16) | (b[2]! << 8) | b[3]!);
  }

  /** The creation second. */
  get time(): Date {
    return new Date(this.unixSeconds * 1000);
  }

  /** The machine id's 3 bytes. */
  get machine(): Uint8Array {
    return decode(this.text).slice(4, 7);
  }

  /** The machine id as a number (0 .. 16777215). */
  get machineId(): number {
    const b = decode(this.text);
    return (b[4]! << 16) | (b[5]! << 8) | b[6]!;
  }

  get pid(): number {
    const b = decode(this.text);
    return (b[7]! << 8) | b[8]!;
  }

  get counter(): number {
    const b = decode(this.text);
    return (b[9]! << 16) | (b[10]! << 8) | b[11]!;
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'an object';
  return typeof v;
}

/** An Xid of text known to be canonical (the server's output, after a cheap check). */
export function xidOfServerText(text: string): Xid {
  if (text.length === XID_CHARS && CANONICAL.test(text)) return new Xid(text, TRUSTED);
  return new Xid(text);
}

/** rs/xid's and the server's default machine id: the first 3 bytes of md5(host name). */
export function machineFromHostname(name: string = hostname()): Uint8Array {
  return new Uint8Array(createHash('md5').update(name, 'utf8').digest().subarray(0, 3));
}

/**
 * The xid12 step, on (time, middle, counter): middle is machine << 16 | pid (40 bits). Returns
 * the next id's second, strictly greater as an id than (lastTime, lastMiddle, lastCounter)
 * (lastTime -1: none yet): a clock that steps back keeps the last second, and an id not above
 * the last one within a second (the counter wrapped, or a lower machine id) moves to the next.
 */
export function xidStepTime(lastTime: number, lastMiddle: number, lastCounter: number,
  now: number, middle: number, counter: number): number {
  if (lastTime < 0) return timeField(now);
  let t = now > lastTime ? now : lastTime;
  if (t === lastTime && (middle < lastMiddle || (middle === lastMiddle && counter <= lastCounter))) {
    t = lastTime + 1;
  }
  if (t > MAX_XID_TIME) timeField(t);
  return t;
}

/** Text of an id from its fields, with a per-second cache of the first 14 characters. */
export class XidEncoder {
  private cacheTime = -1;
  private cacheMiddle = -1;
  private prefix = '';

  text(t: number, middle: number, counter: number): string {
    if (t !== this.cacheTime || middle !== this.cacheMiddle) {
      const machine = Math.floor(middle / 65536);
      this.prefix = encode(fromFields(t, machine, middle & 0xffff, 0)).slice(0, 14);
      this.cacheTime = t;
      this.cacheMiddle = middle;
    }
    // character 14: the pid's low 2 bits and the counter's top 3; then the counter's low 21
    // bits and four zero bits.
    return this.prefix + ALPHABET[((middle & 3) << 3) | (counter >>> 21)] +
      PAIR[(counter >>> 11) & 1023] + PAIR[(counter >>> 1) & 1023] + ((counter & 1) ? 'g' : '0');
  }

  xid(t: number, middle: number, counter: number): Xid {
    return new Xid(this.text(t, middle, counter), TRUSTED);
  }
}

export interface XidGeneratorOptions {
  /** Machine id: a number (0 .. 16777215) or 3 bytes; default the first 3 bytes of md5(host name). */
  machine?: number | Uint8Array;
  /** Process id field (0 .. 65535); default the low 16 bits of process.pid (mixed with the thread id in a worker thread). */
  pid?: number;
  /** The counter's first value; default random. */
  counterStart?: number;
  /** Returns the time in unix seconds (default: Date.now() / 1000); for tests. */
  clock?: () => number;
}

/** The default pid field: the process id's low 16 bits; a worker thread mixes in its thread id. */
export function defaultPid(): number {
  const pid = process.pid & MAX_PID;
  return threadId === 0 ? pid : (pid ^ Math.imul(threadId, 0x9e37)) & MAX_PID;
}

/**
 * Makes rs/xid-format ids in this process, like the server's gen_xid12(): each id strictly
 * greater than the one before (a clock that steps back keeps the last second; when the 24-bit
 * counter wraps within a second the time moves on by one second).
 */
export class XidGenerator {
  private middle: number;
  private counter: number;
  private readonly clock: (() => number) | undefined;
  private lastTime = -1;
  private lastMiddle = 0;
  private lastCounter = 0;
  private readonly encoder = new XidEncoder();
  readonly pid: number;

  constructor(options: XidGeneratorOptions = {}) {
    const machine = options.machine === undefined ? machineFromHostname() : options.machine;
    this.pid = options.pid === undefined ? defaultPid() : checkInt(options.pid, MAX_PID, 'pid');
    this.middle = machineNumber(machine) * 65536 + this.pid;
    this.counter = (options.counterStart ?? randomInt(0, MAX_COUNTER + 1)) & MAX_COUNTER;
    this.clock = options.clock;
  }

  /** The machine id as a number. */
  get machineId(): number {
    return Math.floor(this.middle / 65536);
  }

  /** Changes the machine id of later ids (they still sort after the earlier ones). */
  setMachine(machine: number | Uint8Array): void {
    this.middle = machineNumber(machine) * 65536 + this.pid;
  }

  new(): Xid {
    const counter = this.counter;
    this.counter = (counter + 1) & MAX_COUNTER;
    const now = this.clock === undefined ? Math.floor(Date.now() / 1000) : Math.floor(this.clock());
    const middle = this.middle;
    let t: number;
    const last = this.lastTime;
    if (now > last && last >= 0 && now <= MAX_XID_TIME) {
      t = now; // the common case
    } else {
      t = xidStepTime(last, this.lastMiddle, this.lastCounter, now, middle, counter);
    }
    this.lastTime = t;
    this.lastMiddle = middle;
    this.lastCounter = counter;
    return this.encoder.xid(t, middle, counter);
  }
}

let defaultGenerator: XidGenerator | undefined;
