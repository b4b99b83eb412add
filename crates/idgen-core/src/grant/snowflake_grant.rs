//! The Snowflake generator bound to a grant (rule 4 of the module's list, for Snowflake).

use super::window::{place, with_start, Place, Window};
use super::{GrantError, GrantStep};
use crate::snowflake::{self, Config, SnowflakeState, Step};

/// A Snowflake id's millisecond is its bits above the worker and the sequence.
const MS_SHIFT: u32 = 22;

/// A Snowflake generator bound to a grant: worker id = the grant's slot, every id's
/// millisecond inside the window.
#[derive(Clone, Copy, Debug)]
pub struct SnowflakeGrant {
    state: SnowflakeState,
    config: Config,
    window: Window,
    max_wait_ms: i64,
}

fn checked_snowflake_slot(slot: i64) -> Result<u16, GrantError> {
    snowflake::checked_worker(slot).map_err(|_| GrantError::SlotOutOfRange {
        slot,
        max: snowflake::MAX_WORKER.into(),
    })
}

impl SnowflakeGrant {
    /// A generator that has made nothing yet, for the grant of `slot` over `window` (ms since
    /// `epoch_ms`). A clock up to `max_wait_ms` before the window, or stepped back by at most
    /// that much, waits; further is an error.
    pub fn new(
        epoch_ms: i64,
        slot: i64,
        window: Window,
        max_wait_ms: i64,
    ) -> Result<SnowflakeGrant, GrantError> {
        snowflake::validate_epoch(epoch_ms)?;
        let worker = checked_snowflake_slot(slot)?;
        let max_wait_ms = max_wait_ms.max(0);
        Ok(SnowflakeGrant {
            state: SnowflakeState::new(),
            config: Config {
                epoch_ms,
                worker,
                max_backward_ms: max_wait_ms as u64,
                lease_ms: 0,
            },
            window,
            max_wait_ms,
        })
    }

    /// Binds to a renewed grant (same slot, later `hi`) or a new one (maybe another slot).
    /// The high-water mark stays: the next id is greater than every id made before.
    pub fn rebind(&mut self, slot: i64, window: Window) -> Result<(), GrantError> {
        self.config.worker = checked_snowflake_slot(slot)?;
        self.window = window;
        Ok(())
    }

    /// The next id at clock reading `now_unix_ms` (see the module's rules).
    #[inline]
    pub fn next(&mut self, now_unix_ms: i64) -> Result<GrantStep<i64>, GrantError> {
        let epoch = self.config.epoch_ms;
        let t = now_unix_ms.saturating_sub(epoch);
        match place(self.window, t, self.max_wait_ms, 1) {
            Err(e) => return Err(with_start(e, self.window.lo.saturating_add(epoch))),
            Ok(Place::Renew) => return Ok(GrantStep::Renew),
            Ok(Place::Wait) => return Ok(GrantStep::WaitUntil(self.window.lo + epoch)),
            Ok(Place::Inside) => {}
        }
        let mut copy = self.state;
        // With lease_ms = 0 the state never asks for a lease; the loop only guards the match.
        for _ in 0..2 {
            match copy.next(now_unix_ms, &self.config)? {
                Step::Issued(id) => {
                    // The id carries `t`'s millisecond, inside the window; checked anyway.
                    let ms = id >> MS_SHIFT;
                    if ms >= self.window.hi {
                        return Ok(GrantStep::Renew);
                    }
                    if ms < self.window.lo {
                        return Ok(GrantStep::WaitUntil(self.window.lo + epoch));
                    }
                    self.state = copy;
                    return Ok(GrantStep::Issued(id));
                }
                Step::WaitUntil(u) => {
                    if u.saturating_sub(epoch) >= self.window.hi {
                        return Ok(GrantStep::Renew);
                    }
                    return Ok(GrantStep::WaitUntil(u));
                }
                Step::ExtendLease(lease) => copy.lease_extended(lease),
            }
        }
        Ok(GrantStep::Renew)
    }

    /// The error to raise when the clock reads `now_unix_ms` at or after the window's end and
    /// a renewal did not move it: how far ahead the clock is.
    pub fn after_window(&self, now_unix_ms: i64) -> GrantError {
        let end = self.window.hi.saturating_add(self.config.epoch_ms);
        GrantError::ClockAfterWindow {
            ahead_ms: now_unix_ms.saturating_sub(end),
            window_end_unix_ms: end,
        }
    }

    pub fn slot(&self) -> u16 {
        self.config.worker
    }

    pub fn window(&self) -> Window {
        self.window
    }

    pub fn epoch_ms(&self) -> i64 {
        self.config.epoch_ms
    }

    pub fn max_wait_ms(&self) -> i64 {
        self.max_wait_ms
    }

    /// The last id made, under any grant.
    pub fn last_id(&self) -> Option<i64> {
        self.state.last_id()
    }

    /// The id-time (ms since the epoch) of the last id made, under any grant.
    pub fn last_id_time(&self) -> Option<i64> {
        self.last_id().map(|id| id >> MS_SHIFT)
    }

    /// The id-time of the last id made under the grant bound now (its slot, inside its
    /// window), which is what a release reports; `None` if it made none. (Windows of one slot
    /// never overlap, so an id of this slot inside this window was made under this grant.)
    pub fn grant_last_id_time(&self) -> Option<i64> {
        let id = self.last_id()?;
        let parts = snowflake::decode(id).ok()?;
        let t = parts.ms_since_epoch as i64;
        (parts.worker == self.config.worker && self.window.contains(t)).then_some(t)
    }
}
