// The writer registry's protocol, in one place: what goes over the wire and what comes back.
// registry.ts (the Registry: its pool, timeouts, retries and renewal timers) and grant.ts (the
// error classes, the grant-bound state machine) take it from here:
//
// - the statements (every name qualified, every parameter cast to the exact type of the
//   extension function's argument, no search_path), made for the schema the edition lookup
//   (catalog.ts EDITION_QUERY) finds, and the lease as the interval text they send;
// - the grant row they select, read: the window in id-time (lo_t, hi_t) and as unix µs, the
//   server's clock (server_time, JSON's ISO 8601 text) as unix µs;
// - a server error as the RegistryError class of its SQLSTATE (registryErrorOf);
// - the words of the registry's errors and of the grant-bound generators'.
//
// The words are the shared vectors' (tests/vectors/registry_errors.json, key `words`, face
// `typescript`): each function is named after its entry and takes that entry's placeholders in
// order; test/unit/vectors.test.mjs renders every template and compares. Moments are unix ms,
// written as Date.toISOString writes them; seconds are numbers.
//
// protocol.ts and grant.ts import each other (grant.ts the words, this module the error
// classes). Neither uses the other's names while it loads, only inside functions, so either may
// be loaded first: nothing at the top level here may use a name imported from grant.js.

import { quoteIdent } from './catalog.js';
import { REGISTRY_ERRORS, RegistryError, RegistryFenced, fencedUntil } from './grant.js';

// ---- The statements ----

/** The statements a Registry sends, by name. */
export interface Statements {
  acquire: string;
  acquireDefault: string;
  renew: string;
  release: string;
}

// Every parameter is cast to the exact type of the function's argument, so the call matches the
// extension's function exactly and no overload another role added to its schema (public, where
// the extension usually lives) is a better match for node-postgres's untyped parameters.
export function statements(schema: string): Statements {
  const s = quoteIdent(schema);
  const text = (n: number) => `$${n}::pg_catalog.text`;
  const int8 = (n: number) => `$${n}::pg_catalog.int8`;
  // The window as the server gives it in id-time (lo_t, hi_t: the extension 0.7.0's columns,
  // the kind's own unit) and the server's clock as text: no arithmetic in SQL. server_time is
  // read as JSON's text of it, ISO 8601 with microseconds whatever the session's DateStyle.
  const row = 'grant_id::pg_catalog.text AS grant_id, token::pg_catalog.text AS token, kind, slot, ' +
    'epoch_ms::pg_catalog.text AS epoch_ms, lo_t::pg_catalog.text AS lo_t, hi_t::pg_catalog.text AS hi_t, ' +
    'pg_catalog.to_json(server_time)::pg_catalog.text AS server_time';
  return {
    acquire: `SELECT ${row} FROM ${s}.idgen_acquire(${text(1)}, ${text(2)}, $3::pg_catalog.interval, ${text(4)})`,
    acquireDefault: `SELECT ${row} FROM ${s}.idgen_acquire(${text(1)}, ${text(2)}, pool => ${text(3)})`,
    renew: `SELECT ${row} FROM ${s}.idgen_renew(${int8(1)}, ${int8(2)}, $3::pg_catalog.interval)`,
    release: `SELECT grant_id FROM ${s}.idgen_release(${int8(1)}, ${int8(2)}, $3::pg_catalog.timestamptz)`,
  };
}

/**
 * The statements for the rows of the edition lookup (catalog.ts EDITION_QUERY): the registry's
 * schema is the native extension's, or the portable edition's (its pg_tle extension, or the
 * plain script's schema made by the database owner or a superuser; a look-alike another role
 * planted is not a candidate). A RegistryError when it found none.
 */
export function statementsOf(editionRows: readonly { schema: string }[]): Statements {
  if (editionRows.length !== 1) {
    throw new RegistryError(notInstalled());
  }
  return statements(editionRows[0]!.schema);
}

/** A lease option as the interval text the statements send; null: none (the server's default). */
export function leaseParam(lease: string | number | undefined): string | null {
  if (lease === undefined) return null;
  if (typeof lease === 'string') return lease;
  if (typeof lease === 'number' && Number.isFinite(lease) && lease > 0) return `${lease} seconds`;
  throw new TypeError(`a lease is an interval text or a positive number of seconds, not ${String(lease)}`);
}

// ---- What comes back: the grant row ----

/** One grant row as the server gave it. lo/hi in the kind's id-time (Snowflake: ms since epochMs; xid12: unix seconds). */
export interface GrantRow {
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
  /** The server's clock (unix µs) when it answered. */
  serverUs: number;
}

// The moment `text` names, an ISO 8601 timestamp with an offset as PostgreSQL writes it (JSON's
// form of a timestamptz: "2026-12-04T10:35:12.345678+00:00", or the ISO DateStyle's
// "2026-12-04 10:35:12.345678+00"), as unix microseconds; NaN when it is not one.
const ISO_TIMESTAMP = /^"?(\d{4,})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(?:Z|([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?)"?$/;

/** @internal */
export function isoToUnixUs(text: string): number {
  const m = ISO_TIMESTAMP.exec(text);
  if (m === null) return Number.NaN;
  const [, y, mo, d, h, mi, s, frac, sign, oh, om, os] = m;
  const day = new Date(0);
  day.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  day.setUTCHours(Number(h), Number(mi), Number(s), 0);
  const offsetS = sign === undefined ? 0
    : (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om ?? 0) * 60 + Number(os ?? 0));
  return (day.getTime() / 1000 - offsetS) * 1e6 + (frac === undefined ? 0 : Number(frac.padEnd(6, '0')));
}

/**
 * A row of idgen_acquire / idgen_renew as the statements select it (the numbers as text),
 * read; a RegistryError when its server_time is not ISO 8601.
 */
export function readGrantRow(row: any): GrantRow {
  const epochMs = row.epoch_ms === null ? null : Number(row.epoch_ms);
  const kind = row.kind as 'snowflake' | 'xid12';
  const lo = Number(row.lo_t);
  const hi = Number(row.hi_t);
  // The id-time as unix µs: xid12 t·10^6, Snowflake (epoch_ms + t)·10^3.
  const us = (t: number) => (kind === 'snowflake' ? (epochMs! + t) * 1000 : t * 1e6);
  const serverUs = isoToUnixUs(String(row.server_time));
  if (!Number.isFinite(serverUs)) {
    throw new RegistryError(`the writer registry's answer could not be read: server_time ${String(row.server_time)}`);
  }
  return {
    grantId: row.grant_id,
    token: row.token,
    kind,
    slot: Number(row.slot),
    epochMs,
    loUs: us(lo),
    hiUs: us(hi),
    lo,
    hi,
    serverUs,
  };
}

// ---- What comes back: a server error ----

/**
 * A database error (node-postgres's or Postgres.js's: `code`, `message`, `severity`, `detail`)
 * as the RegistryError of its SQLSTATE (REGISTRY_ERRORS; another code: a plain RegistryError),
 * with the DETAIL added to the message; null for a connection problem (08xxx, 57Pxx, or no
 * server error at all).
 */
export function registryErrorOf(e: unknown): RegistryError | null {
  const err = e as { code?: unknown; message?: unknown; severity?: unknown; detail?: unknown } | null;
  const code = err?.code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof err!.severity === 'string') {
    if (code.startsWith('08') || code.startsWith('57P')) return null;
    const primary = String(err!.message);
    const msg = serverRefusal(primary, err!.detail);
    if (code === '42703' && primary.includes('lo_t')) {
      // idgen_grant's lo_t, hi_t and server_t are new in 0.7.0: an older extension lacks them.
      return new RegistryError(needs070(primary), code, { cause: e });
    }
    const Cls = REGISTRY_ERRORS[code] ?? RegistryError;
    if (Cls === RegistryFenced) return new RegistryFenced(msg, code, { cause: e, until: fencedUntil(primary) });
    return new Cls(msg, code, { cause: e });
  }
  return null;
}

// ---- The words ----

/** A moment (unix ms) as the words write it; a moment no Date holds as `<n> unix ms`. */
export function isoMs(unixMs: number): string {
  const d = new Date(unixMs);
  return Number.isNaN(d.getTime()) ? `${unixMs} unix ms` : d.toISOString();
}

/** A server error: the message, and its DETAIL when there is one. */
export function serverRefusal(message: string, detail?: unknown): string {
  return detail ? `${message} (DETAIL: ${String(detail)})` : message;
}

export function serverRefusalNoDetail(message: string): string {
  return message;
}

export function needs070(message: string): string {
  return `the writer registry needs the pg_idgen extension 0.7.0 or later (ALTER EXTENSION pg_idgen UPDATE): ${message}`;
}

export function notInstalled(): string {
  return 'the pg_idgen extension is not installed in this database: CREATE EXTENSION pg_idgen (or the portable edition\'s script)';
}

export function closed(): string {
  return 'the writer registry is closed';
}

export function unreachable(cause: unknown): string {
  return `the writer registry could not be reached: ${String(cause)}`;
}

export function noAnswer(timeout: number): string {
  return unreachable(`no answer within ${timeout} s, the call was abandoned`);
}

/** What an id call could not do: renew the window ending at `hiMs`, or (null) acquire a grant. */
export function noId(hiMs: number | null): string {
  return hiMs === null ? 'no grant could be acquired, so no id is made'
    : `the grant's window ended at ${isoMs(hiMs)} and could not be renewed, so no id is made`;
}

export function windowUnrenewed(hiMs: number, renewWait: number): string {
  return `${noId(hiMs)}: the writer registry did not answer within ${renewWait} s`;
}

export function grantUnacquired(renewWait: number): string {
  return `${noId(null)}: the writer registry did not answer within ${renewWait} s`;
}

export function windowUnreachable(hiMs: number, cause: string): string {
  return `${noId(hiMs)}: ${cause}`;
}

export function grantUnreachable(cause: string): string {
  return `${noId(null)}: ${cause}`;
}

export function grantLostAgain(): string {
  return `${noId(null)}: the grant was lost again`;
}

export function clockBeforeWindow(behind: number, startMs: number, kind: string, slot: number | null, maxWait: number): string {
  return `the clock is ${behind.toFixed(1)} s behind the grant's window, which starts at ${isoMs(startMs)} ` +
    `(${kind} slot ${slot}); a writer waits at most ${maxWait} s for its window`;
}

export function clockBehindServer(behind: number, inner: string): string {
  return `the clock is ${behind.toFixed(1)} s behind the registry server's: ${inner}`;
}

export function clockNeverReached(maxWait: number, nowMs: number, startMs: number): string {
  return `the clock did not reach the grant's window within ${maxWait} s (it reads ${isoMs(nowMs)}, ` +
    `the window starts at ${isoMs(startMs)})`;
}

export function clockAheadOfWindow(ahead: number, nowMs: number, past: number, hiMs: number, lease: number): string {
  return `the clock is ${ahead.toFixed(1)} s ahead of the registry server's: it reads ${isoMs(nowMs)}, ` +
    `${past.toFixed(3)} s past the end of the grant's window (${isoMs(hiMs)}) just after renewing it ` +
    `for a lease of ${lease.toFixed(1)} s; a writer runs only while its clock is less than a lease ahead of the server's`;
}
