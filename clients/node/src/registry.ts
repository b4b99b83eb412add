// Writers whose identity comes from the database (README "Writers and their identities"): a
// Registry hands out Snowflake and xid12 generators bound to grants of the extension's writer
// registry (idgen_acquire, idgen_renew, idgen_release).
//
// A grant gives this writer one slot (a Snowflake worker id or an xid12 machine id) for a
// window of id-time [lo, hi); the generator makes only ids of that slot inside that window
// (grant.ts), so two writers never make the same id whatever their clocks do. Each generator
// renews its grant from an unref'd timer at about half its lease, and before an id when the
// window has run out; a grant that another writer continued (55000) is replaced by a new one;
// a writer that cannot reach the registry when it must renew throws instead of going on.
//
// Every call is one statement through the pool (node-postgres sends it unnamed: nothing is
// prepared, no session state), so a PgBouncer in transaction mode in between is fine. Node has
// no fork(): worker threads and cluster workers each make their own Registry and grants.

import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';
import { randomInt } from 'node:crypto';
import { type Queryable, SCHEMA_QUERY, quoteIdent } from './catalog.js';
import {
  ClockAheadOfWindow, ClockBeforeWindow, GrantLost, RegistryError, RegistryUnavailable, SlotsExhausted,
  SnowflakeGrantState, StepKind, WrongToken, XidGrantState, isoMs,
} from './grant.js';
import { sleepSync, snowflakeTime } from './snowflake.js';
import { MAX_COUNTER, type Xid, defaultPid } from './xid.js';

export type { Queryable } from './catalog.js';

export interface RegistryOptions {
  /** This writer's name in the registry; default "<host name>:<pid>" (":t<threadId>" added in a worker thread). */
  writer?: string;
  /** The registry pool grants come from (default 'app'). */
  pool?: string;
  /**
   * Seconds a generator waits for a window that starts a little after its clock, and
   * (Snowflake) for a clock stepped back behind its last id; beyond that it throws. Default 5.
   */
  maxWait?: number;
  /** Returns unix milliseconds (default Date.now); for tests. */
  clockMs?: () => number;
}

export interface GrantOptions {
  /** The grant's lease: an interval text ('10 minutes') or seconds; default the server's (10 minutes). */
  lease?: string | number;
}

/** One grant as the registry returned it. lo/hi in the kind's id-time (Snowflake: ms since epochMs; xid12: unix seconds). */
export interface Grant {
  grantId: string;
  token: string;
  kind: 'snowflake' | 'xid12';
  slot: number;
  lo: number;
  hi: number;
  /** The Snowflake epoch the grant's ids use (null for xid12). */
  epochMs: number | null;
  loUs: number;
  hiUs: number;
  /** The server's clock (unix µs) when it answered; this writer's clock and monotonic ms then; the round trip in ms. */
  serverUs: number;
  wallUs: number;
  mono: number;
  rtt: number;
}

const ERRORS: Record<string, typeof RegistryError> = {
  '55000': GrantLost,
  '53400': SlotsExhausted,
  '42501': WrongToken,
};

function defaultWriter(): string {
  return `${hostname()}:${process.pid}${threadId === 0 ? '' : `:t${threadId}`}`;
}

function leaseParam(lease: string | number | undefined): string | null {
  if (lease === undefined) return null;
  if (typeof lease === 'string') return lease;
  if (typeof lease === 'number' && Number.isFinite(lease) && lease > 0) return `${lease} seconds`;
  throw new TypeError(`a lease is an interval text or a positive number of seconds, not ${String(lease)}`);
}

/** A database error as a RegistryError, or null for a connection problem. */
function databaseError(e: any): RegistryError | null {
  const code = e?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof e.severity === 'string') {
    if (code.startsWith('08') || code.startsWith('57P')) return null;
    const msg = String(e.message) + (e.detail ? ` (DETAIL: ${e.detail})` : '');
    const Cls = ERRORS[code] ?? RegistryError;
    return new Cls(msg, code, { cause: e });
  }
  return null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface Statements {
  acquire: string;
  acquireDefault: string;
  renew: string;
  release: string;
}

// `column` (a timestamptz) as unix microseconds in text, floored. Every function, operator and
// type is named with its schema: nothing resolves through the caller's search_path, where
// another role may have put look-alikes (`public.*(numeric, integer)` is an exact match for
// `extract(...) * 1000000` and would beat pg_catalog's numeric * numeric). The literal is
// numeric so that pg_catalog's operator is the exact match.
function unixUs(column: string, alias: string): string {
  return `pg_catalog.floor(pg_catalog.extract('epoch', ${column}) OPERATOR(pg_catalog.*) ` +
    `1000000::pg_catalog.numeric)::pg_catalog.int8::pg_catalog.text AS ${alias}`;
}

// Every parameter is cast to the exact type of the function's argument, so the call matches the
// extension's function exactly and no overload another role added to its schema (public, where
// the extension usually lives) is a better match for node-postgres's untyped parameters.
function statements(schema: string): Statements {
  const s = quoteIdent(schema);
  const text = (n: number) => `$${n}::pg_catalog.text`;
  const int8 = (n: number) => `$${n}::pg_catalog.int8`;
  const row = 'grant_id::pg_catalog.text AS grant_id, token::pg_catalog.text AS token, kind, slot, ' +
    'epoch_ms::pg_catalog.text AS epoch_ms, ' +
    `${unixUs('lo', 'lo_us')}, ${unixUs('hi', 'hi_us')}, ${unixUs('server_time', 'server_us')}`;
  return {
    acquire: `SELECT ${row} FROM ${s}.idgen_acquire(${text(1)}, ${text(2)}, $3::pg_catalog.interval, ${text(4)})`,
    acquireDefault: `SELECT ${row} FROM ${s}.idgen_acquire(${text(1)}, ${text(2)}, pool => ${text(3)})`,
    renew: `SELECT ${row} FROM ${s}.idgen_renew(${int8(1)}, ${int8(2)}, $3::pg_catalog.interval)`,
    release: `SELECT grant_id FROM ${s}.idgen_release(${int8(1)}, ${int8(2)}, $3::pg_catalog.timestamptz)`,
  };
}

/**
 * The writer registry of one database, over a node-postgres Pool (or Client, or anything with
 * pool.query(text, values)). `snowflake()` and `xid12()` give generators bound to grants
 * (acquired at once); `close()` releases them (with the time of the last id made under each)
 * and stops their timers. The pool stays yours: close the Registry before you end the pool.
 */
export class Registry {
  readonly writer: string;
  readonly pool: string;
  readonly maxWait: number;
  readonly clockMs: () => number;
  private sql: Statements | null = null;
  private readonly generators = new Set<GrantGenerator>();
  private closed = false;

  constructor(private readonly db: Queryable, options: RegistryOptions = {}) {
    if (!db || typeof (db as Queryable).query !== 'function') {
      throw new TypeError('Registry takes a node-postgres Pool or Client (anything with query(text, values))');
    }
    this.writer = options.writer ?? defaultWriter();
    this.pool = options.pool ?? 'app';
    this.maxWait = options.maxWait ?? 5;
    this.clockMs = options.clockMs ?? Date.now;
  }

  /** A Snowflake generator bound to a grant (nextId()). */
  async snowflake(options: GrantOptions = {}): Promise<GrantSnowflake> {
    return this.add(new GrantSnowflake(this, leaseParam(options.lease)));
  }

  /** An xid12 generator bound to a grant (new() gives an Xid). */
  async xid12(options: GrantOptions = {}): Promise<GrantXid> {
    return this.add(new GrantXid(this, leaseParam(options.lease)));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private async add<G extends GrantGenerator>(gen: G): Promise<G> {
    this.checkOpen();
    this.generators.add(gen);
    try {
      await gen.exclusive(() => gen.acquire());
    } catch (e) {
      this.generators.delete(gen);
      throw e;
    }
    return gen;
  }

  /** @internal */
  checkOpen(): void {
    if (this.closed) throw new RegistryError('the writer registry is closed');
  }

  /**
   * Releases every grant (each with the time of the last id made under it) and stops the
   * renewal timers. Errors reaching the registry are ignored: a grant not released ends with
   * its window.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.generators].map(async (gen) => {
      try {
        await gen.release();
      } catch (e) {
        if (!(e instanceof RegistryError)) throw e;
      }
    }));
    this.generators.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @internal Runs one statement and returns its row; a connection problem is retried once. */
  async call(name: keyof Statements, params: unknown[]): Promise<{ row: any; rtt: number }> {
    let last: unknown;
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        if (this.sql === null) {
          const { rows } = await this.db.query(SCHEMA_QUERY);
          if (rows.length !== 1) {
            throw new RegistryError('the pg_idgen extension is not installed in this database: CREATE EXTENSION pg_idgen');
          }
          this.sql = statements(rows[0].schema);
        }
        const sent = performance.now();
        const { rows } = await this.db.query(this.sql[name], params);
        return { row: rows[0], rtt: performance.now() - sent };
      } catch (e) {
        if (e instanceof RegistryError) throw e;
        const mapped = databaseError(e);
        if (mapped !== null) throw mapped;
        last = e;
      }
    }
    throw new RegistryUnavailable(`the writer registry could not be reached: ${(last as Error)?.message ?? last}`,
      undefined, { cause: last });
  }

  private grant(row: any, rtt: number): Grant {
    const epochMs = row.epoch_ms === null ? null : Number(row.epoch_ms);
    const loUs = Number(row.lo_us);
    const hiUs = Number(row.hi_us);
    const kind = row.kind as 'snowflake' | 'xid12';
    const snow = kind === 'snowflake';
    return {
      grantId: row.grant_id,
      token: row.token,
      kind,
      slot: Number(row.slot),
      epochMs,
      loUs,
      hiUs,
      lo: snow ? Math.floor(loUs / 1000) - epochMs! : Math.floor(loUs / 1e6),
      hi: snow ? Math.floor(hiUs / 1000) - epochMs! : Math.floor(hiUs / 1e6),
      serverUs: Number(row.server_us),
      wallUs: this.clockMs() * 1000,
      mono: performance.now(),
      rtt,
    };
  }

  /** @internal */
  async acquire(gen: GrantGenerator): Promise<Grant> {
    this.checkOpen();
    const { row, rtt } = gen.lease === null
      ? await this.call('acquireDefault', [gen.kind, this.writer, this.pool])
      : await this.call('acquire', [gen.kind, this.writer, gen.lease, this.pool]);
    return this.grant(row, rtt);
  }

  /** @internal */
  async renew(gen: GrantGenerator, g: Grant): Promise<Grant> {
    this.checkOpen();
    const { row, rtt } = await this.call('renew', [g.grantId, g.token, gen.lease]);
    return this.grant(row, rtt);
  }

  /** @internal */
  async release(g: Grant, lastIdTime: string): Promise<void> {
    await this.call('release', [g.grantId, g.token, lastIdTime]);
  }

  /** @internal */
  forget(gen: GrantGenerator): void {
    this.generators.delete(gen);
  }
}

function leaseSeconds(g: Grant): number {
  return (g.hiUs - g.serverUs) / 1e6;
}

/** This writer's clock minus the server's at the answer (half the round trip taken off), in seconds. */
export function grantOffsetSeconds(g: Grant): number {
  return (g.wallUs - g.serverUs - (g.rtt * 1000) / 2) / 1e6;
}

abstract class GrantGenerator<T = unknown> {
  abstract readonly kind: 'snowflake' | 'xid12';
  protected abstract readonly state: SnowflakeGrantState | XidGrantState;
  protected current: Grant | null = null;
  protected madeUnderGrant = false;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private busy: Promise<void> | null = null;

  constructor(protected readonly registry: Registry, readonly lease: string | null) {}

  /** The grant in use (null before the first, after release or close). */
  get grant(): Grant | null {
    return this.current;
  }

  get slot(): number | null {
    return this.current?.slot ?? null;
  }

  /** @internal Runs one grant operation at a time (acquire, renew, release). */
  async exclusive(fn: () => Promise<void>): Promise<void> {
    while (this.busy) await this.busy.catch(() => undefined);
    const p = fn();
    this.busy = p;
    try {
      await p;
    } finally {
      if (this.busy === p) this.busy = null;
    }
  }

  private bind(g: Grant, renewal: boolean): void {
    const old = this.current;
    if (renewal && old !== null) {
      g.lo = old.lo;
      g.loUs = old.loUs;
      if (old.hi > g.hi) {
        g.hi = old.hi;
        g.hiUs = old.hiUs;
      }
    } else {
      this.madeUnderGrant = false;
    }
    this.current = g;
    if (g.epochMs !== null) (this.state as SnowflakeGrantState).setEpoch(g.epochMs);
    this.state.bind(g.slot, g.lo, g.hi);
    this.schedule(Math.max((leaseSeconds(g) * 1000) / 2 - (performance.now() - g.mono), 50));
  }

  private schedule(delayMs: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.backgroundRenew();
    }, Math.min(delayMs, 2 ** 31 - 1));
    this.timer.unref();
  }

  private drop(): void {
    this.current = null;
    this.state.unbind();
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  /** @internal */
  async acquire(): Promise<void> {
    this.bind(await this.registry.acquire(this), false);
  }

  /** Renews the grant; when it was lost, acquires a new one (never keeps the old). */
  private async renewOrReplace(): Promise<void> {
    const g = this.current;
    if (g === null) return this.acquire();
    try {
      this.bind(await this.registry.renew(this, g), true);
    } catch (e) {
      if (!(e instanceof GrantLost)) throw e;
      this.drop();
      await this.acquire();
    }
  }

  private async backgroundRenew(): Promise<void> {
    if (this.registry.isClosed) return;
    try {
      await this.exclusive(async () => {
        const g = this.current;
        if (g === null || this.registry.isClosed) return;
        try {
          const renewed = await this.registry.renew(this, g);
          if (this.current === g) this.bind(renewed, true);
        } catch (e) {
          if (this.current !== g) return;
          if (e instanceof GrantLost) {
            this.drop();
            try {
              await this.acquire();
            } catch {
              // the next id tries again, and throws if it cannot
            }
          } else {
            // Unreachable for now: try again soon; the window still holds until its end.
            this.schedule(Math.min(Math.max((leaseSeconds(g) * 1000) / 8, 50), 5000));
          }
        }
      });
    } catch {
      // never an unhandled rejection from the timer
    }
  }

  /** The slow path of making an id: waits, renewals, new grants, errors with offsets. */
  protected async make(): Promise<T> {
    const reg = this.registry;
    let tried = false;
    const deadline = performance.now() + reg.maxWait * 1000 + 1000;
    for (;;) {
      reg.checkOpen();
      if (this.busy) {
        await this.busy.catch(() => undefined);
        continue;
      }
      const now = this.clock();
      let kind: StepKind;
      try {
        kind = this.state.step(now);
      } catch (e) {
        if (e instanceof ClockBeforeWindow && this.current !== null) {
          throw new ClockBeforeWindow(`the clock is ${(-grantOffsetSeconds(this.current)).toFixed(1)} s behind the registry server's: ${e.message}`);
        }
        throw e;
      }
      if (kind === StepKind.Id) {
        this.madeUnderGrant = true;
        return this.taken();
      }
      if (kind === StepKind.Wait) {
        if (performance.now() > deadline) {
          throw new ClockBeforeWindow(
            `the clock did not reach the grant's window within ${reg.maxWait} s (it reads ${this.iso(now)}, ` +
            `the window starts at ${isoMs((this.current?.loUs ?? 0) / 1000)})`);
        }
        await sleep(Math.max(this.toMs(this.state.waitUntil - now), 1));
        continue;
      }
      if (tried) throw this.ahead(now);
      tried = true;
      try {
        await this.exclusive(() => this.renewOrReplace());
      } catch (e) {
        if (e instanceof RegistryUnavailable) {
          const g = this.current;
          const what = g === null ? 'no grant could be acquired'
            : `the grant's window ended at ${isoMs(g.hiUs / 1000)} and could not be renewed`;
          throw new RegistryUnavailable(`${what}, so no id is made: ${e.message}`, undefined, { cause: e });
        }
        throw e;
      }
    }
  }

  /** The sync path: short waits synchronously, an error when the window needs renewing (I/O). */
  protected makeSync(): T {
    this.registry.checkOpen();
    const deadline = performance.now() + this.registry.maxWait * 1000 + 1000;
    for (;;) {
      const now = this.clock();
      const kind = this.state.step(now);
      if (kind === StepKind.Id) {
        this.madeUnderGrant = true;
        return this.taken();
      }
      if (kind === StepKind.Renew || this.busy || performance.now() > deadline) {
        throw new RegistryError(
          this.current === null
            ? 'this generator has no grant now (released, lost or being renewed): use the async call, which acquires one'
            : `the grant's window ended at ${isoMs(this.current.hiUs / 1000)}: use the async call, which renews it ` +
              '(the background renewal keeps the window half a lease ahead while the registry is reachable)');
      }
      sleepSync(Math.max(this.toMs(this.state.waitUntil - now), 0.05));
    }
  }

  private ahead(now: number): ClockAheadOfWindow {
    const g = this.current!;
    const past = (this.toMs(now) - g.hiUs / 1000) / 1000;
    return new ClockAheadOfWindow(
      `the clock is ${grantOffsetSeconds(g).toFixed(1)} s ahead of the registry server's: it reads ${this.iso(now)}, ` +
      `${past.toFixed(3)} s past the end of the grant's window (${isoMs(g.hiUs / 1000)}) just after renewing it ` +
      `for a lease of ${leaseSeconds(g).toFixed(1)} s; a writer runs only while its clock is less than a lease ahead of the server's`);
  }

  /**
   * Releases this generator's grant now, with the time of the last id made under it (the next
   * id acquires a new grant).
   */
  async release(): Promise<void> {
    await this.exclusive(async () => {
      const g = this.current;
      const made = this.madeUnderGrant;
      const last = made ? this.lastIdTime() : '-infinity';
      this.drop();
      if (g !== null) await this.registry.release(g, last);
    });
  }

  /** The fast path: an id when the state machine makes one at once, else the slow path. */
  protected next(): Promise<T> {
    if (this.current !== null && !this.registry.isClosed) {
      let kind: StepKind | -1;
      try {
        kind = this.state.step(this.clock());
      } catch {
        kind = -1; // the slow path says it again, with offsets
      }
      if (kind === StepKind.Id) {
        this.madeUnderGrant = true;
        return Promise.resolve(this.taken());
      }
    }
    return this.make();
  }

  protected abstract taken(): T;
  protected abstract clock(): number;
  protected abstract toMs(clockValue: number): number;
  protected abstract iso(clockValue: number): string;
  protected abstract lastIdTime(): string;
}

/**
 * A Snowflake generator bound to a grant of the writer registry: ids whose worker id is the
 * grant's slot and whose time is inside the grant's window, strictly increasing (across
 * renewals and new grants too).
 */
export class GrantSnowflake extends GrantGenerator<bigint> {
  readonly kind = 'snowflake' as const;
  protected readonly state: SnowflakeGrantState;

  constructor(registry: Registry, lease: string | null) {
    super(registry, lease);
    this.state = new SnowflakeGrantState(undefined, Math.round(registry.maxWait * 1000));
  }

  /** The epoch of the grant's ids (unix ms). */
  get epochMs(): number {
    return this.state.epochMs;
  }

  /** The next id: renews or replaces the grant first when its window has run out. */
  nextId(): Promise<bigint> {
    return this.next();
  }

  /**
   * The next id without I/O: waits out a used-up millisecond synchronously; throws a
   * RegistryError when the window has run out (only when the registry was unreachable for
   * about half a lease, or after release()), where nextId() would renew.
   */
  nextIdSync(): bigint {
    return this.makeSync();
  }

  protected taken(): bigint {
    return this.state.id;
  }

  /** An id's time with the grant's epoch. */
  time(id: bigint | string): Date {
    return snowflakeTime(id, this.state.epochMs);
  }

  protected clock(): number {
    return this.registry.clockMs();
  }

  protected toMs(v: number): number {
    return v;
  }

  protected iso(v: number): string {
    return isoMs(v);
  }

  protected lastIdTime(): string {
    return isoMs(this.state.epochMs + this.state.lastMs);
  }
}

/**
 * An xid12 generator bound to a grant of the writer registry: Xid values whose machine id is
 * the grant's slot and whose second is inside the grant's window, strictly increasing.
 */
export class GrantXid extends GrantGenerator<Xid> {
  readonly kind = 'xid12' as const;
  protected readonly state: XidGrantState;

  constructor(registry: Registry, lease: string | null) {
    super(registry, lease);
    this.state = new XidGrantState({ pid: defaultPid(), counterStart: randomInt(0, MAX_COUNTER + 1), maxWait: Math.round(registry.maxWait) });
  }

  /** The next id: renews or replaces the grant first when its window has run out. */
  new(): Promise<Xid> {
    return this.next();
  }

  /** The next id without I/O; throws a RegistryError where new() would renew (see GrantSnowflake.nextIdSync). */
  newSync(): Xid {
    return this.makeSync();
  }

  protected taken(): Xid {
    return this.state.id!;
  }

  protected clock(): number {
    return this.registry.clockMs() / 1000;
  }

  protected toMs(v: number): number {
    return v * 1000;
  }

  protected iso(v: number): string {
    return isoMs(v * 1000);
  }

  protected lastIdTime(): string {
    return isoMs(this.state.lastTime * 1000);
  }
}
