// The grant-bound generators' rules, pure (no I/O, an injected clock reading): the state
// machine of the Rust core's grant.rs and the Python client's _grant.py, checked against the
// shared traces in tests/vectors/grant_traces.json (the registry's contract: README.md,
// "Writers and their identities").
//
// A generator bound to a grant of slot `slot` for the id-time window [lo, hi) (Snowflake: ms
// since its epoch; xid12: unix seconds) makes only ids whose slot is `slot` and whose id-time
// is in the window, each greater than the one before. step(now) with a clock reading
// (Snowflake: unix ms; xid12: unix seconds) gives one of: an id (recorded as the high-water
// mark), a wait until the clock reads a time, or a renewal (renew the grant or acquire a new
// one, bind it, step again); or throws ClockBeforeWindow or the plain generator's error.
// bind() keeps the high-water mark, so ids keep increasing across renewals and new slots.

import { DEFAULT_EPOCH_MS, MAX_WORKER, SnowflakeBuilder, SnowflakeCore } from './snowflake.js';
import { MAX_COUNTER, MAX_MACHINE, MAX_PID, Xid, XidEncoder, xidStepTime } from './xid.js';

/** An error of the writer registry or of a generator bound to one of its grants. */
export class RegistryError extends Error {
  override name = 'RegistryError';
  /** The server's SQLSTATE when the server raised it. */
  readonly sqlstate: string | undefined;

  constructor(message: string, sqlstate?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.sqlstate = sqlstate;
  }
}

/** The registry could not be reached (connection refused or lost). */
export class RegistryUnavailable extends RegistryError {
  override name = 'RegistryUnavailable';
}

/** SQLSTATE 55000: the grant cannot be renewed (its slot's next id-time went to another writer, or it was released). */
export class GrantLost extends RegistryError {
  override name = 'GrantLost';
}

/** SQLSTATE 53400: every Snowflake slot is held (the message's DETAIL says how many, when the first frees). */
export class SlotsExhausted extends RegistryError {
  override name = 'SlotsExhausted';
}

/** SQLSTATE 42501: the token does not match the grant. */
export class WrongToken extends RegistryError {
  override name = 'WrongToken';
}

/** The writer's clock is outside its grant's window and cannot be brought into it. */
export class ClockOutsideWindow extends RegistryError {
  override name = 'ClockOutsideWindow';
}

/** The clock is further before the grant's window than the generator waits. */
export class ClockBeforeWindow extends ClockOutsideWindow {
  override name = 'ClockBeforeWindow';
}

/** The clock is past the end of the window even just after a renewal (more than a lease ahead of the server's). */
export class ClockAheadOfWindow extends ClockOutsideWindow {
  override name = 'ClockAheadOfWindow';
}

export function isoMs(unixMs: number): string {
  const d = new Date(unixMs);
  return Number.isNaN(d.getTime()) ? `${unixMs} unix ms` : d.toISOString();
}

/** What step() asks for when it makes no id. */
export enum StepKind {
  Id = 0,
  Wait = 1,
  Renew = 2,
}

/**
 * The grant-bound Snowflake state machine. `now` in unix ms; lo, hi in ms since epochMs;
 * maxWait in ms: how far a clock before the window, or stepped back behind the last id, is
 * waited out; beyond it ClockBeforeWindow or SnowflakeClockError.
 */
export class SnowflakeGrantState {
  slot: number | null = null;
  lo = 0;
  hi = 0;
  /** Result of the last step: the id, or the clock reading to wait until. */
  id = 0n;
  waitUntil = 0;
  private readonly core: SnowflakeCore;
  private readonly builder = new SnowflakeBuilder();
  private workerBits = 0;

  constructor(public epochMs: number = DEFAULT_EPOCH_MS, readonly maxWait = 5000) {
    this.core = new SnowflakeCore(epochMs, maxWait);
  }

  /** Whether an id was made (lastMs >= 0). */
  get made(): boolean {
    return this.core.lastMs >= 0;
  }

  /** The high-water mark as (ms since the epoch, low 22 bits); ms -1: none. */
  get lastMs(): number {
    return this.core.lastMs;
  }

  get lastId(): bigint | null {
    return this.core.lastMs < 0 ? null : (BigInt(this.core.lastMs) << 22n) | BigInt(this.core.lastLow);
  }

  setEpoch(epochMs: number): void {
    this.epochMs = epochMs;
    this.core.epochMs = epochMs;
  }

  bind(slot: number, lo: number, hi: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot > MAX_WORKER) {
      throw new RangeError(`snowflake slot ${slot} is outside 0 .. ${MAX_WORKER}`);
    }
    if (lo > hi) throw new RangeError(`a grant's window [${lo}, ${hi}) ends before it starts`);
    this.slot = slot;
    this.lo = lo;
    this.hi = hi;
    this.workerBits = slot * 4096;
  }

  /** No grant: every step says renew. */
  unbind(): void {
    this.slot = null;
    this.lo = 0;
    this.hi = 0;
    this.workerBits = 0;
  }

  step(now: number): StepKind {
    const t = now - this.epochMs;
    if (t >= this.hi) return StepKind.Renew;
    if (t < this.lo) {
      if (this.lo - t <= this.maxWait) {
        this.waitUntil = this.epochMs + this.lo;
        return StepKind.Wait;
      }
      throw new ClockBeforeWindow(
        `the clock is ${((this.lo - t) / 1000).toFixed(1)} s behind the grant's window, which starts at ` +
        `${isoMs(this.epochMs + this.lo)} (snowflake slot ${this.slot}); a writer waits at most ` +
        `${this.maxWait / 1000} s for its window`);
    }
    const core = this.core;
    if (!core.step(now, this.workerBits)) {
      // A wait for the window's end or later (its last millisecond used up): renew.
      if (core.waitUntil - this.epochMs < this.hi) {
        this.waitUntil = core.waitUntil;
        return StepKind.Wait;
      }
      return StepKind.Renew;
    }
    if (core.outMs >= this.hi) return StepKind.Renew;
    core.commit();
    this.id = this.builder.id(core.outMs, core.outLow);
    return StepKind.Id;
  }
}

/**
 * The grant-bound xid12 state machine. `now` in unix seconds (rounded down); lo, hi and
 * maxWait in seconds. The machine id is the slot; pid and the counter fill the rest.
 */
export class XidGrantState {
  slot: number | null = null;
  lo = 0;
  hi = 0;
  id: Xid | null = null;
  waitUntil = 0;
  pid: number;
  counter: number;
  lastTime = -1;
  private lastMiddle = 0;
  private lastCounter = 0;
  private middle = 0;
  private readonly encoder = new XidEncoder();

  constructor(options: { pid: number; counterStart: number; maxWait?: number }, readonly maxWait = options.maxWait ?? 5) {
    if (!Number.isInteger(options.pid) || options.pid < 0 || options.pid > MAX_PID) {
      throw new RangeError(`xid12 pid ${options.pid} is outside the range 0 .. ${MAX_PID}`);
    }
    this.pid = options.pid;
    this.counter = options.counterStart & MAX_COUNTER;
  }

  get made(): boolean {
    return this.lastTime >= 0;
  }

  /** The 12 bytes of the last id as hex, for tests; null: none. */
  get lastId(): Xid | null {
    return this.lastTime < 0 ? null : this.encoder.xid(this.lastTime, this.lastMiddle, this.lastCounter);
  }

  bind(slot: number, lo: number, hi: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot > MAX_MACHINE) {
      throw new RangeError(`xid12 slot ${slot} is outside 0 .. ${MAX_MACHINE}`);
    }
    if (lo > hi) throw new RangeError(`a grant's window [${lo}, ${hi}) ends before it starts`);
    this.slot = slot;
    this.lo = lo;
    this.hi = hi;
    this.middle = slot * 65536 + this.pid;
  }

  unbind(): void {
    this.slot = null;
    this.lo = 0;
    this.hi = 0;
    this.middle = 0;
  }

  step(now: number): StepKind {
    const t = Math.floor(now);
    if (t >= this.hi) return StepKind.Renew;
    if (t < this.lo) {
      if (this.lo - t <= this.maxWait) {
        this.waitUntil = this.lo;
        return StepKind.Wait;
      }
      throw new ClockBeforeWindow(
        `the clock is ${(this.lo - now).toFixed(1)} s behind the grant's window, which starts at ` +
        `${isoMs(this.lo * 1000)} (xid12 slot ${this.slot}); a writer waits at most ${this.maxWait} s for its window`);
    }
    const counter = this.counter;
    const time = xidStepTime(this.lastTime, this.lastMiddle, this.lastCounter, t, this.middle, counter);
    if (time >= this.hi) return StepKind.Renew;
    this.lastTime = time;
    this.lastMiddle = this.middle;
    this.lastCounter = counter;
    this.counter = (counter + 1) & MAX_COUNTER;
    this.id = this.encoder.xid(time, this.middle, counter);
    return StepKind.Id;
  }
}
