// Snowflake ids: 64-bit, time-ordered, non-negative, the server's layout (docs/formats.md §5):
// | 1 bit: 0 | 41 bits: ms since the epoch | 10 bits: worker | 12 bits: sequence |
// Ids are bigint (a JavaScript number loses the low bits past 2^53). node-postgres and
// Postgres.js hand out a bigint column as a string by default: the decoders take that too.

export const MAX_WORKER = 1023;
export const MAX_SEQUENCE = 4095;
export const MAX_TIMESTAMP = 2 ** 41 - 1;
/** The server's default pg_idgen.snowflake_epoch: 2010-11-04 01:42:54.657 UTC. */
export const DEFAULT_EPOCH_MS = 1288834974657;
/** The server's default pg_idgen.snowflake_max_backward_ms. */
export const DEFAULT_MAX_BACKWARD_MS = 1000;
const MAX_ID = (1n << 63n) - 1n;

/** A value that is not a Snowflake id, or a bad setting. */
export class SnowflakeError extends RangeError {
  override name = 'SnowflakeError';
}

/** The clock stepped back behind the last id by more than the generator waits out. */
export class SnowflakeClockError extends Error {
  override name = 'SnowflakeClockError';
}

export interface SnowflakeParts {
  msSinceEpoch: number;
  worker: number;
  sequence: number;
}

function toId(id: bigint | string | number): bigint {
  let v: bigint;
  if (typeof id === 'bigint') v = id;
  else if (typeof id === 'string' && /^-?[0-9]+$/.test(id)) v = BigInt(id);
  else if (typeof id === 'number' && Number.isSafeInteger(id)) v = BigInt(id);
  else throw new SnowflakeError(`a snowflake id is a bigint or its decimal text, not ${JSON.stringify(String(id))}`);
  if (v < 0n) throw new SnowflakeError(`invalid snowflake id ${v}: snowflake ids are never negative`);
  if (v > MAX_ID) throw new SnowflakeError(`snowflake id ${v} does not fit in a bigint`);
  return v;
}

function checkEpoch(epochMs: number): number {
  if (!Number.isSafeInteger(epochMs) || epochMs < 0) {
    throw new SnowflakeError(`snowflake epoch ${epochMs} ms is not a non-negative integer`);
  }
  return epochMs;
}

/** Splits an id (bigint or decimal text) into ms since the epoch, worker and sequence. */
export function snowflakeParts(id: bigint | string): SnowflakeParts {
  const v = toId(id);
  const low = Number(v & 0x3fffffn);
  return { msSinceEpoch: Number(v >> 22n), worker: low >>> 12, sequence: low & MAX_SEQUENCE };
}

export function snowflakeWorker(id: bigint | string): number {
  return Number((toId(id) >> 12n) & 1023n);
}

export function snowflakeSequence(id: bigint | string): number {
  return Number(toId(id) & 4095n);
}

/** The id's time in unix milliseconds. */
export function snowflakeUnixMs(id: bigint | string, epochMs: number = DEFAULT_EPOCH_MS): number {
  return checkEpoch(epochMs) + Number(toId(id) >> 22n);
}

/** The id's millisecond (SQL snowflake_time). */
export function snowflakeTime(id: bigint | string, epochMs: number = DEFAULT_EPOCH_MS): Date {
  return new Date(snowflakeUnixMs(id, epochMs));
}

function msOf(time: Date | number, epochMs: number): number {
  const unix = typeof time === 'number' ? time : time.getTime();
  if (!Number.isFinite(unix)) throw new SnowflakeError('not a valid time');
  const ms = Math.floor(unix) - checkEpoch(epochMs);
  if (ms < 0 || ms > MAX_TIMESTAMP) {
    throw new SnowflakeError(`snowflake timestamp out of range: ${ms} ms since the epoch does not fit in 41 bits`);
  }
  return ms;
}

/** The smallest id of a millisecond (SQL snowflake_min): time as a Date or unix ms. */
export function snowflakeMin(time: Date | number, epochMs: number = DEFAULT_EPOCH_MS): bigint {
  return BigInt(msOf(time, epochMs)) << 22n;
}

/** The largest id of a millisecond (SQL snowflake_max). */
export function snowflakeMax(time: Date | number, epochMs: number = DEFAULT_EPOCH_MS): bigint {
  return (BigInt(msOf(time, epochMs)) << 22n) | 0x3fffffn;
}

/** An id from its parts. */
export function snowflakeFromParts(msSinceEpoch: number, worker: number, sequence: number): bigint {
  if (!Number.isInteger(msSinceEpoch) || msSinceEpoch < 0 || msSinceEpoch > MAX_TIMESTAMP) {
    throw new SnowflakeError(`snowflake timestamp ${msSinceEpoch} is outside 0 .. ${MAX_TIMESTAMP}`);
  }
  checkWorker(worker);
  if (!Number.isInteger(sequence) || sequence < 0 || sequence > MAX_SEQUENCE) {
    throw new SnowflakeError(`snowflake sequence ${sequence} is outside 0 .. ${MAX_SEQUENCE}`);
  }
  return (BigInt(msSinceEpoch) << 22n) | BigInt(worker * 4096 + sequence);
}

export function checkWorker(worker: number): number {
  if (!Number.isInteger(worker) || worker < 0 || worker > MAX_WORKER) {
    throw new SnowflakeError(`snowflake worker id ${worker} is outside the range 0 .. ${MAX_WORKER}`);
  }
  return worker;
}

/**
 * The server's Snowflake state machine on numbers: an id is (ms, low) with low = worker << 12 |
 * sequence. `last` is the high-water mark (lastMs -1: none). step() returns the next id's
 * (ms, low) in `out` and true, or false with `out.waitUntil` (unix ms) to wait for; it throws
 * SnowflakeClockError when the clock is more than maxBackwardMs behind the last id.
 */
export class SnowflakeCore {
  lastMs = -1;
  lastLow = 0;
  outMs = 0;
  outLow = 0;
  waitUntil = 0;

  constructor(public epochMs: number, public maxBackwardMs: number) {}

  step(nowUnixMs: number, workerBits: number): boolean {
    const ms = nowUnixMs - this.epochMs;
    if (ms < 0) {
      throw new SnowflakeError(`the clock (${nowUnixMs} unix ms) is before the snowflake epoch (${this.epochMs} ms)`);
    }
    if (ms > MAX_TIMESTAMP) {
      throw new SnowflakeError(`snowflake timestamp out of range: ${ms} ms since the epoch does not fit in 41 bits`);
    }
    const lastMs = this.lastMs;
    const lastLow = this.lastLow;
    // last < base: the base id of this millisecond
    if (lastMs < ms || (lastMs === ms && lastLow < workerBits)) {
      this.outMs = ms;
      this.outLow = workerBits;
      return true;
    }
    // the same millisecond with sequence numbers left
    if (lastMs === ms && lastLow - workerBits < MAX_SEQUENCE) {
      this.outMs = ms;
      this.outLow = lastLow + 1;
      return true;
    }
    const highest = workerBits | MAX_SEQUENCE;
    const targetMs = highest > lastLow ? lastMs : lastMs + 1;
    if (targetMs > MAX_TIMESTAMP) {
      throw new SnowflakeError(`snowflake timestamp out of range: ${targetMs} ms since the epoch does not fit in 41 bits`);
    }
    const behind = lastMs > ms ? lastMs - ms : 0;
    if (behind > this.maxBackwardMs) {
      throw new SnowflakeClockError(
        `the clock moved back ${behind} ms behind the last snowflake id (at most ${this.maxBackwardMs} ms is waited out)`);
    }
    this.waitUntil = this.epochMs + targetMs;
    return false;
  }

  commit(): void {
    this.lastMs = this.outMs;
    this.lastLow = this.outLow;
  }
}

/** Builds bigint ids with one allocation per id: the base of the millisecond and worker is cached. */
export class SnowflakeBuilder {
  private ms = -1;
  private worker = -1;
  private base = 0n;

  id(ms: number, low: number): bigint {
    const sequence = low & MAX_SEQUENCE;
    const worker = low - sequence;
    if (ms !== this.ms || worker !== this.worker) {
      this.base = (BigInt(ms) << 22n) | BigInt(worker);
      this.ms = ms;
      this.worker = worker;
    }
    return this.base + SEQUENCES[sequence]!;
  }
}
const SEQUENCES: bigint[] = Array.from({ length: MAX_SEQUENCE + 1 }, (_, i) => BigInt(i));

/** Sleeps synchronously (the generators' short waits: a used-up millisecond, a small step back). */
export function sleepSync(ms: number): void {
  if (ms <= 0) return;
  Atomics.wait(SLEEPER, 0, 0, ms);
}
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

export interface SnowflakeOptions {
  /** The worker id, 0 .. 1023 (required). */
  workerId: number;
  /** Unix ms of the epoch; default the server's default, 1288834974657. */
  epochMs?: number;
  /** How far a clock stepped back behind the last id is waited out, in ms (default 1000). */
  maxBackwardMs?: number;
  /** Returns unix milliseconds (default Date.now); for tests. */
  clock?: () => number;
  /** Sleeps synchronously for ms (default Atomics.wait); for tests. */
  sleep?: (ms: number) => void;
}

/**
 * A Snowflake generator for one worker id, with the server's layout and rules: nextId() returns
 * a bigint strictly greater than every id this generator made before. When the 4096 ids of a
 * millisecond are used up it waits (synchronously) for the next; when the clock steps back it
 * waits up to maxBackwardMs, beyond that it throws SnowflakeClockError, never a duplicate.
 * Two generators make distinct ids only with distinct worker ids: get one from the Registry.
 */
export class Snowflake {
  readonly workerId: number;
  readonly epochMs: number;
  readonly maxBackwardMs: number;
  private readonly core: SnowflakeCore;
  private readonly workerBits: number;
  private readonly clock: () => number;
  private readonly sleep: (ms: number) => void;
  private readonly builder = new SnowflakeBuilder();

  constructor(options: SnowflakeOptions) {
    this.workerId = checkWorker(options.workerId);
    this.epochMs = checkEpoch(options.epochMs ?? DEFAULT_EPOCH_MS);
    const mb = options.maxBackwardMs ?? DEFAULT_MAX_BACKWARD_MS;
    if (!Number.isInteger(mb) || mb < 0) throw new SnowflakeError(`maxBackwardMs ${mb} must be a non-negative integer`);
    this.maxBackwardMs = mb;
    this.core = new SnowflakeCore(this.epochMs, mb);
    this.workerBits = this.workerId * 4096;
    this.clock = options.clock ?? Date.now;
    this.sleep = options.sleep ?? sleepSync;
  }

  nextId(): bigint {
    const core = this.core;
    for (;;) {
      const now = this.clock();
      if (core.step(now, this.workerBits)) {
        core.commit();
        return this.builder.id(core.outMs, core.outLow);
      }
      // Wait the whole millisecond out: never an id of a used-up millisecond.
      this.sleep(Math.max(core.waitUntil - now, 0) || 0.05);
    }
  }

  /** The id's time with this generator's epoch. */
  time(id: bigint | string): Date {
    return snowflakeTime(id, this.epochMs);
  }

  unixMs(id: bigint | string): number {
    return snowflakeUnixMs(id, this.epochMs);
  }
}
