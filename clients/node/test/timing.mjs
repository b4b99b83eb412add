// Bounds in time checked by the order of events, not by a margin in milliseconds: the tests'
// pass must not depend on the machine's speed (docs/DEVELOPMENT.md, "Tests and time").

/**
 * What `call()` came to ({ value } or { error }), or 'late' when a timer of `ms` armed just
 * after the call fired first. A client whose bound is a timer armed inside the call (in the
 * same turn of the event loop, before this one) settles first however slow the machine: Node
 * runs due timers in the order of their expiry, and the promise reactions of each before the
 * next.
 */
export async function settlesWithin(call, ms) {
  const p = call();
  p.catch(() => undefined);
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
  });
  try {
    return await Promise.race([p.then((value) => ({ value }), (error) => ({ error })), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `call()`'s result and, measured beside it, how late a timer of `ms` armed with it fired (the
 * event loop's lag in this run): for bounds made of several timers one after another.
 */
export async function withLag(call, ms) {
  const t0 = performance.now();
  const beside = new Promise((resolve) => setTimeout(() => resolve(performance.now()), ms));
  let result;
  try {
    result = { value: await call() };
  } catch (error) {
    result = { error };
  }
  const took = performance.now() - t0;
  const lag = Math.max(0, (await beside) - t0 - ms);
  return { ...result, took, lag };
}
