//! Generators bound to a writer grant (the registry's contract: docs/formats.md §8, "Writer
//! registry: the grant", the writer's rule; pinned by tests/vectors/grant_traces.json).
//!
//! A *grant* gives one writer a *slot* (a Snowflake worker id or an xid12 machine id) for a
//! *window* `[lo, hi)` of id-time: Snowflake milliseconds since the epoch, xid12 unix seconds.
//! The registry never grants overlapping windows of one slot, so a writer that makes only ids
//! of its slot with an id-time inside its window, strictly increasing, can never make an id
//! that another writer makes, whatever the clocks do.
//!
//! [`SnowflakeGrant`] and [`XidGrant`] are that writer: the plain state machines
//! ([`SnowflakeState`], [`xid::Generator`]) with the slot as worker / machine id, run on a
//! copy of their state whose result is kept only when the id lies inside the window. They
//! never sleep and do no I/O: [`GrantStep::WaitUntil`] asks the caller to wait,
//! [`GrantStep::Renew`] to renew the grant (or acquire a new one) and call
//! [`SnowflakeGrant::rebind`] / [`XidGrant::rebind`] before asking again.
//!
//! `next(now)` with the clock reading `now` (unix ms for Snowflake, unix s for xid12), and
//! `t` = `now` in id-time:
//! 1. `t >= hi`: [`GrantStep::Renew`].
//! 2. `t < lo` by at most `max_wait`: [`GrantStep::WaitUntil`]`(lo)` (in the clock's unit).
//! 3. `t < lo` by more: [`GrantError::ClockBeforeWindow`].
//! 4. Otherwise the plain generator runs on a copy of the state, with the slot:
//!    - an id whose id-time is `>= hi` (xid12: a counter wrap or a clock step back borrowed
//!      a second) or a wait until an id-time `>= hi` (Snowflake: the window's last
//!      millisecond is used up): [`GrantStep::Renew`], the state unchanged;
//!    - an id inside the window: the state is kept, [`GrantStep::Issued`];
//!    - a wait (Snowflake: a used-up millisecond, a clock step back of at most `max_wait`):
//!      [`GrantStep::WaitUntil`];
//!    - an error (Snowflake: a step back of more than `max_wait`): that error.
//!
//! A rebind keeps the high-water mark, so ids keep increasing across renewals and across
//! grants of other slots (the plain generators compare whole ids).
//!
//! Nothing here panics; every failure is a [`GrantError`] carrying its numbers.
//!
//! One file per job: `window.rs` (a window, and where a clock reading lies against it: rules
//! 1-3), `snowflake_grant.rs` and `xid_grant.rs` (the two generators: rule 4); their public
//! items are re-exported here. `tests.rs` holds the rules by hand and one writer's
//! properties, `model_tests.rs` a model of the registry with writers on their own clocks.
//! [`edge`] is the offline rule of an edge device (docs/formats.md §10), over the state its
//! file keeps.
//!
//! [`SnowflakeState`]: crate::snowflake::SnowflakeState
//! [`xid::Generator`]: crate::xid::Generator

pub mod edge;
mod snowflake_grant;
mod window;
mod xid_grant;

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;

pub use snowflake_grant::SnowflakeGrant;
pub use window::Window;
pub use xid_grant::XidGrant;

use crate::snowflake::SnowflakeError;
use crate::xid::XidError;

/// How long a clock before the window waits by default instead of failing, in ms (Snowflake).
pub const DEFAULT_MAX_WAIT_MS: i64 = 5_000;
/// How long a clock before the window waits by default instead of failing, in s (xid12).
pub const DEFAULT_MAX_WAIT_S: i64 = 5;

/// What the caller must do after `next`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantStep<T> {
    /// A fresh id: its slot is the grant's, its id-time inside the window, and it is greater
    /// than every id made before by this generator.
    Issued(T),
    /// Wait until the clock reads at least this (unix ms for Snowflake, unix s for xid12),
    /// then ask again. Nothing changed.
    WaitUntil(i64),
    /// The window is over or used up: renew the grant (or acquire a new one), rebind, and ask
    /// again. Nothing changed. If the renewed window still gives `Renew`, the clock is ahead
    /// of the registry's: see `after_window`.
    Renew,
}

/// Why a grant-bound generator made no id. Times are in milliseconds (unix ms for instants),
/// whatever the kind, so that one message fits both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantError {
    /// The clock is before the grant's window by more than the generator waits.
    ClockBeforeWindow {
        behind_ms: i64,
        window_start_unix_ms: i64,
        max_wait_ms: i64,
    },
    /// The clock is at or after the end of the window, and no renewal moved it: the clock is
    /// ahead of the registry's. Made by the caller through `after_window` when a renewal
    /// did not help.
    ClockAfterWindow {
        ahead_ms: i64,
        window_end_unix_ms: i64,
    },
    /// A slot outside the kind's range (Snowflake 0..=1023, xid12 0..=16777215).
    SlotOutOfRange { slot: i64, max: i64 },
    /// The plain Snowflake generator refused (e.g. the clock stepped back by more than
    /// `max_wait`, a bad epoch, a time outside the 41-bit range).
    Snowflake(SnowflakeError),
    /// The plain xid12 generator refused (a time outside the 32-bit range).
    Xid(XidError),
}

impl From<SnowflakeError> for GrantError {
    fn from(e: SnowflakeError) -> Self {
        GrantError::Snowflake(e)
    }
}

impl From<XidError> for GrantError {
    fn from(e: XidError) -> Self {
        GrantError::Xid(e)
    }
}
