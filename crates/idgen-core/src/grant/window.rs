//! A window of id-time, and where a clock reading lies against it (rules 1-3 of the module's
//! list).

use super::GrantError;

/// A window of id-time `[lo, hi)`: Snowflake milliseconds since the epoch, or xid12 unix
/// seconds. `lo >= hi` is an empty window (every call asks for a renewal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub lo: i64,
    pub hi: i64,
}

impl Window {
    pub const fn new(lo: i64, hi: i64) -> Window {
        Window { lo, hi }
    }

    /// Whether `t` (id-time) lies in `[lo, hi)`.
    pub fn contains(&self, t: i64) -> bool {
        self.lo <= t && t < self.hi
    }
}

/// Where id-time `t` lies against a window (rules 1-3 of the module's list).
pub(super) enum Place {
    Inside,
    Wait,
    Renew,
}

#[inline(always)]
pub(super) fn place(
    window: Window,
    t: i64,
    max_wait: i64,
    unit_ms: i64,
) -> Result<Place, GrantError> {
    if t >= window.hi {
        return Ok(Place::Renew);
    }
    if t < window.lo {
        return before(window, t, max_wait, unit_ms);
    }
    Ok(Place::Inside)
}

#[cold]
fn before(window: Window, t: i64, max_wait: i64, unit_ms: i64) -> Result<Place, GrantError> {
    let behind = window.lo.saturating_sub(t);
    if behind <= max_wait {
        return Ok(Place::Wait);
    }
    Err(GrantError::ClockBeforeWindow {
        behind_ms: behind.saturating_mul(unit_ms),
        window_start_unix_ms: 0, // filled in by the caller, who knows the epoch
        max_wait_ms: max_wait.saturating_mul(unit_ms),
    })
}

pub(super) fn with_start(e: GrantError, start_unix_ms: i64) -> GrantError {
    match e {
        GrantError::ClockBeforeWindow {
            behind_ms,
            max_wait_ms,
            ..
        } => GrantError::ClockBeforeWindow {
            behind_ms,
            window_start_unix_ms: start_unix_ms,
            max_wait_ms,
        },
        other => other,
    }
}
