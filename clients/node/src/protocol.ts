// The writer registry's protocol, in one place: the words of its errors and of the grant-bound
// generators' (grant.ts and registry.ts take them from here). They are the shared vectors'
// (tests/vectors/registry_errors.json, key `words`, face `typescript`): each function is named
// after its entry and takes that entry's placeholders in order; test/unit/vectors.test.mjs
// renders every template and compares. Moments are unix ms, written as Date.toISOString writes
// them; seconds are numbers.

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
