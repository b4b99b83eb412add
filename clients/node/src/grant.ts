// The grant-bound generators' rules, pure (no I/O, an injected clock reading): the state
// machine of the Rust core's grant/ and the Python client's _grant.py, checked against the
// shared traces in tests/vectors/grant_traces.json (the registry's contract: docs/formats.md §8).
//
// A generator bound to a grant of slot `slot` for the id-time window [lo, hi) (Snowflake: ms
// since its epoch; xid12: unix seconds) makes only ids whose slot is `slot` and whose id-time
// is in the window, each greater than the one before. step(now) with a clock reading
// (Snowflake: unix ms; xid12: unix seconds) gives one of: an id (recorded as the high-water
// mark), a wait until the clock reads a time, or a renewal (renew the grant or acquire a new
// one, bind it, step again); or throws ClockBeforeWindow or the plain generator's error.
// bind() keeps the high-water mark, so ids keep increasing across renewals and new slots.

import * as words from './protocol.js';
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

/**
 * The registry could not be reached (connection refused or lost, or no answer within the
 * Registry's `timeout`), or at the window's end no renewed window came within `renewWait`.
 */
export class RegistryUnavailable extends RegistryError {
  override name = 'RegistryUnavailable';
}

// One class per condition of the registry's refusals (tests/vectors/registry_errors.json; the
// registry's errors in docs/formats.md): a program tells them apart by the class alone.

/**
 * SQLSTATE 55000 (grant lost) or 42704 (no such grant): the grant cannot be renewed (released,
 * ended before a fence, or its slot's next id-time went to another writer, or a registry
 * restored from before it was made). The generator acquires a new grant.
 */
export class GrantLost extends RegistryError {
  override name = 'GrantLost';
}

/** SQLSTATE 53400: every slot of the pool for this kind is held (the DETAIL says how many and when the first ends). */
export class SlotsExhausted extends RegistryError {
  override name = 'SlotsExhausted';
}

/** SQLSTATE 42501: a wrong token, a grant of another role, or a reservation (which has no token). */
export class WrongToken extends RegistryError {
  override name = 'WrongToken';
}

/**
 * SQLSTATE IG001: after a failover, a point-in-time recovery or a restore, the registry grants
 * nothing of this kind in this pool until a grant that may have been lost must have ended.
 * `until` is that moment (from the message; rounded up to the millisecond), or null when the
 * message names none.
 */
export class RegistryFenced extends RegistryError {
  override name = 'RegistryFenced';
  readonly until: Date | null;

  /** `options.until` when given, else the moment the message ends with. */
  constructor(message: string, sqlstate?: string, options?: { cause?: unknown; until?: Date | null }) {
    super(message, sqlstate, options);
    this.until = options?.until !== undefined ? options.until : fencedUntil(message);
  }
}

/** SQLSTATE IG002: the caller's role may not take grants in this pool (idgen_pool_allow). */
export class PoolNotAllowed extends RegistryError {
  override name = 'PoolNotAllowed';
}

/** SQLSTATE IG003: the caller's role holds its cap of live grants in this pool. */
export class CapReached extends RegistryError {
  override name = 'CapReached';
}

/** SQLSTATE IG004: the lease asked for is longer than the pool allows for this kind. */
export class LeaseTooLong extends RegistryError {
  override name = 'LeaseTooLong';
}

/** SQLSTATE IG005: pg_idgen.snowflake_epoch differs from the epoch of the registry's Snowflake grants. */
export class EpochChanged extends RegistryError {
  override name = 'EpochChanged';
}

/** SQLSTATE IG006: an edge device reports an id outside its grant's window. */
export class ReportOutsideWindow extends RegistryError {
  override name = 'ReportOutsideWindow';
}

/** SQLSTATE 23505: one grant is used by two edge devices (a copied device state). */
export class DeviceConflict extends RegistryError {
  override name = 'DeviceConflict';
}

/** The class of each SQLSTATE the registry raises; any other code is a plain RegistryError. */
export const REGISTRY_ERRORS: Readonly<Record<string, typeof RegistryError>> = Object.freeze({
  IG001: RegistryFenced,
  IG002: PoolNotAllowed,
  IG003: CapReached,
  IG004: LeaseTooLong,
  IG005: EpochChanged,
  IG006: ReportOutsideWindow,
  '55000': GrantLost,
  '42704': GrantLost,
  '42501': WrongToken,
  '53400': SlotsExhausted,
  '23505': DeviceConflict,
});

const UNTIL = / until (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{6})Z$/;

/**
 * The moment a fenced registry's message ends with (`... until 2026-12-04T10:35:12.345678Z`),
 * as a Date rounded up to the millisecond (waiting until it is never too early), or null.
 */
export function fencedUntil(message: string): Date | null {
  const m = UNTIL.exec(message);
  if (m === null) return null;
  const seconds = Date.parse(`${m[1]}Z`);
  if (Number.isNaN(seconds)) return null;
  return new Date(seconds + Math.ceil(Number(m[2]) / 1000));
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

export { isoMs } from './protocol.js';

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
        words.clockBeforeWindow((this.lo - t) / 1000, this.epochMs + this.lo, 'snowflake', this.slot, this.maxWait / 1000));
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
        words.clockBeforeWindow(this.lo - now, this.lo * 1000, 'xid12', this.slot, this.maxWait));
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
