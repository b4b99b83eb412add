// Writers whose identity comes from the database (README "Writers and their identities"): a
// Registry hands out Snowflake and xid12 generators bound to grants of pg_idgen's writer
// registry (idgen_acquire, idgen_renew, idgen_release).
//
// A grant gives this writer one slot (a Snowflake worker id or an xid12 machine id) for a
// window of id-time [lo, hi); the generator makes only ids of that slot inside that window
// (grant.ts), so two writers never make the same id whatever their clocks do. Each generator
// renews its grant from an unref'd timer at about half its lease (counted on the server's
// clock: half of what was left of the window when the server answered, from when the statement
// was sent), and when an id finds the window run out; a grant that is lost (55000, or 42704 no
// such grant) is replaced by a new one; a writer that cannot reach the registry when it must
// renew throws instead of going on. Each refusal of the registry has its own SQLSTATE and its
// own error class (grant.ts, REGISTRY_ERRORS; tests/vectors/registry_errors.json).
//
// What goes over the wire and what comes back is protocol.ts's: the statements and the schema
// they are made for, the lease's interval text, the grant row read, a server error's class and
// every error's words. This module runs them: the pool, the bounds, the retries, the timers.
//
// No call waits on the network past its bounds: every statement is abandoned after `timeout`
// (5 s by default; node-postgres's query_timeout too, which drops the stuck connection from its
// pool); at the window's end an id waits at most `renewWait` (1 s by default) for the renewal
// in flight, then throws RegistryUnavailable; close() takes at most about `timeout`. A
// Registry made from a connection string or config opens its own pool with the connect, TCP
// keepalive, statement and query timeouts set.
//
// Every call is one statement through the pool (node-postgres sends it unnamed: nothing is
// prepared, no session state), so a PgBouncer in transaction mode in between is fine. Node has
// no fork(): worker threads and cluster workers each make their own Registry and grants.

import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { threadId } from 'node:worker_threads';
import { randomInt } from 'node:crypto';
import { EDITION_QUERY, type Queryable } from './catalog.js';
import {
  type GrantRow, type Statements, leaseParam, readGrantRow, registryErrorOf, statementsOf,
} from './protocol.js';
import * as words from './protocol.js';
import {
  ClockAheadOfWindow, ClockBeforeWindow, GrantLost, RegistryError, RegistryUnavailable,
  SnowflakeGrantState, StepKind, XidGrantState, isoMs,
} from './grant.js';
import { sleepSync, snowflakeTime } from './snowflake.js';
import { MAX_COUNTER, type Xid, defaultPid } from './xid.js';

export type { Queryable } from './catalog.js';
export { registryErrorOf } from './protocol.js';

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
  /**
   * Seconds one call to the registry may take, connecting included, before it is abandoned and
   * RegistryUnavailable thrown; also about the longest close() takes. Default 5. A Registry
   * made from a connection string or config uses it for its pool's connect, statement and
   * query timeouts too.
   */
  timeout?: number;
  /**
   * Seconds nextId()/new() wait at the window's end (or without a grant) for the renewal (or
   * the new grant) before throwing RegistryUnavailable. Default 1.
   */
  renewWait?: number;
}

export interface GrantOptions {
  /**
   * The grant's lease: an interval text ('10 minutes') or seconds; none: the server's default
   * for the pool and kind (idgen_acquire's lease argument is not sent).
   */
  lease?: string | number;
}

/**
 * What a Registry opens its own node-postgres Pool with: a connection string, or a pg.Pool
 * config (host, port, user, database, ...). Its timeouts default from the Registry's `timeout`
 * (connectionTimeoutMillis, query_timeout, statement_timeout), with TCP keepalives after 10 s
 * idle; a setting given here wins.
 */
export type RegistryConnectionConfig = string | Record<string, unknown>;

/**
 * One grant as the registry returned it (GrantRow: lo/hi in the kind's id-time, Snowflake ms
 * since epochMs, xid12 unix seconds; the window and the server's clock as unix µs), with this
 * writer's side of the answer.
 */
export interface Grant extends GrantRow {
  /** This writer's clock (unix µs) and monotonic ms when the server's answer came; the round trip in ms. */
  wallUs: number;
  mono: number;
  rtt: number;
  /** This writer's monotonic ms (performance.now()) when the statement was sent: the server read its clock after it. */
  sent: number;
}

function defaultWriter(): string {
  return `${hostname()}:${process.pid}${threadId === 0 ? '' : `:t${threadId}`}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `p`, or `onTimeout()` thrown when it has not settled within `ms` (p goes on, unobserved). */
function within<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(onTimeout()), Math.max(ms, 0));
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** A node-postgres Pool, Client or PoolClient: it takes a query config with query_timeout. */
function isNodePostgres(db: any): boolean {
  return typeof db.connect === 'function' && ('totalCount' in db || typeof db.connectionParameters === 'object');
}

/**
 * The writer registry of one database, over a node-postgres Pool (or Client, or anything with
 * pool.query(text, values)), or over a Pool of its own made from a connection string or config
 * (RegistryConnectionConfig). `snowflake()` and `xid12()` give generators bound to grants
 * (acquired at once); `close()` releases them (with the time of the last id made under each)
 * and stops their timers. A pool you pass stays yours: close the Registry before you end the
 * pool. A pool of its own is ended by close().
 */
export class Registry {
  readonly writer: string;
  readonly pool: string;
  readonly maxWait: number;
  readonly clockMs: () => number;
  readonly timeout: number;
  readonly renewWait: number;
  private sql: Statements | null = null;
  private db: Queryable | null = null;
  private opening: Promise<Queryable> | null = null;
  private readonly connection: RegistryConnectionConfig | null = null;
  private readonly generators = new Set<GrantGenerator>();
  private closed = false;

  constructor(db: Queryable | RegistryConnectionConfig, options: RegistryOptions = {}) {
    if (typeof db === 'string' || (db !== null && typeof db === 'object' && typeof (db as Queryable).query !== 'function')) {
      this.connection = db as RegistryConnectionConfig;
    } else if (db && typeof (db as Queryable).query === 'function') {
      this.db = db as Queryable;
    } else {
      throw new TypeError('Registry takes a node-postgres Pool or Client (anything with query(text, values)), ' +
        'a connection string or a pg.Pool config');
    }
    this.writer = options.writer ?? defaultWriter();
    this.pool = options.pool ?? 'app';
    this.maxWait = options.maxWait ?? 5;
    this.clockMs = options.clockMs ?? Date.now;
    this.timeout = options.timeout ?? 5;
    this.renewWait = options.renewWait ?? 1;
    if (!(this.timeout > 0) || !(this.renewWait >= 0) || !Number.isFinite(this.timeout) || !Number.isFinite(this.renewWait)) {
      throw new RangeError('timeout must be a positive number of seconds and renewWait not negative');
    }
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
    if (this.closed) throw new RegistryError(words.closed());
  }

  /**
   * Releases every grant (each with the time of the last id made under it) and stops the
   * renewal timers; ends the Registry's own pool if it has one. Errors reaching the registry
   * are ignored, and releases not done within `timeout` are given up: a grant not released
   * ends with its window.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const end = performance.now() + this.timeout * 1000;
    const gens = [...this.generators];
    this.generators.clear();
    const releases = Promise.all(gens.map(async (gen) => {
      try {
        await gen.release();
      } catch (e) {
        if (!(e instanceof RegistryError)) throw e;
      }
    }));
    try {
      await within(releases, end - performance.now(), () => new RegistryUnavailable('close: releases not done in time'));
    } catch (e) {
      if (!(e instanceof RegistryError)) throw e;
    } finally {
      for (const gen of gens) gen.stop();
    }
    if (this.connection !== null && this.opening !== null) {
      const ending = this.opening.then((own) => (own as unknown as { end(): Promise<void> }).end());
      try {
        await within(ending, Math.max(end - performance.now(), 100), () => new RegistryUnavailable('close: the pool did not end in time'));
      } catch {
        // a connection stuck on a dead link: node-postgres drops it at its query_timeout
      }
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The Queryable: the one given, or this Registry's own pool (opened at the first call). */
  private database(): Promise<Queryable> {
    if (this.db !== null) return Promise.resolve(this.db);
    if (this.opening === null) this.opening = this.openPool();
    return this.opening;
  }

  private async openPool(): Promise<Queryable> {
    let mod: any;
    try {
      mod = await import('pg');
    } catch (e) {
      throw new RegistryError('a Registry made from a connection string or config needs node-postgres: npm install pg',
        undefined, { cause: e });
    }
    const Pool = mod.default?.Pool ?? mod.Pool;
    const ms = Math.ceil(this.timeout * 1000);
    const given = typeof this.connection === 'string' ? { connectionString: this.connection } : { ...this.connection };
    const pool = new Pool({
      max: 4,
      connectionTimeoutMillis: ms,
      query_timeout: ms,
      statement_timeout: ms,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10000,
      idleTimeoutMillis: 30000,
      allowExitOnIdle: true,
      ...given,
    });
    // An idle connection that breaks (a dead link) emits 'error' on the pool: the next call
    // makes a new connection, and must not find the process ended by an unhandled event.
    pool.on('error', () => undefined);
    return pool as Queryable;
  }

  /** One statement, abandoned (RegistryUnavailable) when it has not come back by `end` (monotonic ms). */
  private async query(db: Queryable, text: string, values: unknown[], end: number): Promise<{ rows: any[] }> {
    const left = end - performance.now();
    const late = () => new RegistryUnavailable(words.noAnswer(this.timeout));
    if (left <= 0) throw late();
    const p = isNodePostgres(db)
      ? db.query({ text, values, query_timeout: Math.ceil(left) } as unknown as string)
      : db.query(text, values);
    return within(p, left, late);
  }

  /**
   * @internal Runs one statement and returns its row; a connection problem is retried once.
   * The whole call takes at most `timeout` seconds.
   */
  async call(name: keyof Statements, params: unknown[]): Promise<{ row: any; rtt: number; sent: number }> {
    const end = performance.now() + this.timeout * 1000;
    let last: unknown;
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        const db = await this.database();
        if (this.sql === null) {
          // The registry's schema by the edition lookup (protocol.ts statementsOf).
          const { rows } = await this.query(db, EDITION_QUERY, [], end);
          this.sql = statementsOf(rows);
        }
        const sent = performance.now();
        const { rows } = await this.query(db, this.sql[name], params, end);
        return { row: rows[0], rtt: performance.now() - sent, sent };
      } catch (e) {
        if (e instanceof RegistryError) throw e;
        const mapped = registryErrorOf(e);
        if (mapped !== null) throw mapped;
        last = e;
        if (performance.now() >= end) break;
      }
    }
    throw new RegistryUnavailable(words.unreachable((last as Error)?.message ?? last),
      undefined, { cause: last });
  }

  private grant(row: any, rtt: number, sent: number): Grant {
    return { ...readGrantRow(row), wallUs: this.clockMs() * 1000, mono: performance.now(), rtt, sent };
  }

  /** @internal */
  async acquire(gen: GrantGenerator): Promise<Grant> {
    for (let attempt = 1; ; attempt++) {
      this.checkOpen();
      try {
        // Without a lease the argument is not sent: the function's default (the pool's default lease for the kind).
        const { row, rtt, sent } = gen.lease === null
          ? await this.call('acquireDefault', [gen.kind, this.writer, this.pool])
          : await this.call('acquire', [gen.kind, this.writer, gen.lease, this.pool]);
        return this.grant(row, rtt, sent);
      } catch (e) {
        // 55P03: concurrent acquires took every candidate first ("try again").
        if (!(e instanceof RegistryError) || e.sqlstate !== '55P03' || attempt === 5) throw e;
      }
    }
  }

  /** @internal */
  async renew(gen: GrantGenerator, g: Grant): Promise<Grant> {
    this.checkOpen();
    const { row, rtt, sent } = await this.call('renew', [g.grantId, g.token, gen.lease]);
    return this.grant(row, rtt, sent);
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
  private refreshing: Promise<void> | null = null;

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
    // From the server's clock: half of what was left of the window when the server answered,
    // counted from when the statement was sent (the server read its clock after that), so a
    // slow link's round trip does not eat into the time left to renew.
    this.schedule(Math.max(g.sent + (leaseSeconds(g) * 1000) / 2 - performance.now(), 50));
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

  /** @internal Forgets the grant and stops the timer, without the network (close()). */
  stop(): void {
    this.drop();
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

  /**
   * The renewal (or, without a grant, the acquire) in flight, else a new one; it rejects with
   * its error. The timer and the ids that find their window run out share it: an id waits for
   * it at most renewWait, and it goes on (bounded by the Registry's timeout) when they stop
   * waiting.
   */
  private refresh(): Promise<void> {
    if (this.refreshing === null) {
      const p: Promise<void> = this.exclusive(() => this.renewOrReplace()).finally(() => {
        if (this.refreshing === p) this.refreshing = null;
      });
      p.catch(() => undefined); // its callers see its error; none need be waiting
      this.refreshing = p;
    }
    return this.refreshing;
  }

  private async backgroundRenew(): Promise<void> {
    if (this.registry.isClosed) return;
    const g = this.current;
    try {
      await this.refresh();
    } catch {
      if (this.registry.isClosed || g === null || this.current !== g) return; // no grant: the next id asks
      // Unreachable (or refused) for now: try again soon; the window still holds until its end.
      this.schedule(Math.min(Math.max((leaseSeconds(g) * 1000) / 8, 50), 5000));
    }
  }

  private what(): string {
    const g = this.current;
    return words.noId(g === null ? null : g.hiUs / 1000);
  }

  /**
   * At the window's end or without a grant: the renewal (or a new grant), waited for at most
   * renewWait seconds. Throws what it threw (RegistryUnavailable with what it means for ids),
   * or RegistryUnavailable when it has not come back in time.
   */
  private async awaitWindow(): Promise<void> {
    const reg = this.registry;
    const what = this.what();
    try {
      const g = this.current;
      await within(this.refresh(), reg.renewWait * 1000, () => new RegistryUnavailable(
        g === null ? words.grantUnacquired(reg.renewWait) : words.windowUnrenewed(g.hiUs / 1000, reg.renewWait)));
    } catch (e) {
      if (e instanceof RegistryUnavailable && !e.message.startsWith(what)) {
        // windowUnreachable, grantUnreachable
        throw new RegistryUnavailable(`${what}: ${e.message}`, undefined, { cause: e });
      }
      throw e;
    }
  }

  /** The slow path of making an id: waits, renewals, new grants, errors with offsets. */
  protected async make(): Promise<T> {
    const reg = this.registry;
    let tried = false;
    const deadline = performance.now() + reg.maxWait * 1000 + 1000;
    for (;;) {
      reg.checkOpen();
      const now = this.clock();
      let kind: StepKind;
      try {
        kind = this.state.step(now);
      } catch (e) {
        if (e instanceof ClockBeforeWindow && this.current !== null) {
          throw new ClockBeforeWindow(words.clockBehindServer(-grantOffsetSeconds(this.current), e.message));
        }
        throw e;
      }
      if (kind === StepKind.Id) {
        this.madeUnderGrant = true;
        return this.taken();
      }
      if (kind === StepKind.Wait) {
        if (performance.now() > deadline) {
          throw new ClockBeforeWindow(words.clockNeverReached(reg.maxWait, this.toMs(now), (this.current?.loUs ?? 0) / 1000));
        }
        await sleep(Math.max(this.toMs(this.state.waitUntil - now), 1));
        continue;
      }
      if (tried) {
        if (this.current !== null) throw this.ahead(now);
        throw new RegistryUnavailable(words.grantLostAgain());
      }
      tried = true;
      await this.awaitWindow();
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
      if (kind === StepKind.Renew || performance.now() > deadline) {
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
      words.clockAheadOfWindow(grantOffsetSeconds(g), this.toMs(now), past, g.hiUs / 1000, leaseSeconds(g)));
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

  protected lastIdTime(): string {
    return isoMs(this.state.lastTime * 1000);
  }
}
