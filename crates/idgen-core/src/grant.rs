//! Generators bound to a writer grant (SPEC §8, design/writer-grants.md family B).
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

use crate::snowflake::{self, Config, SnowflakeError, SnowflakeState, Step};
use crate::xid::{self, Xid, XidError, MAX_MACHINE};

/// A Snowflake id's millisecond is its bits above the worker and the sequence.
const MS_SHIFT: u32 = 22;

/// How long a clock before the window waits by default instead of failing, in ms (Snowflake).
pub const DEFAULT_MAX_WAIT_MS: i64 = 5_000;
/// How long a clock before the window waits by default instead of failing, in s (xid12).
pub const DEFAULT_MAX_WAIT_S: i64 = 5;

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

/// Where id-time `t` lies against a window (rules 1-3 of the module's list).
enum Place {
    Inside,
    Wait,
    Renew,
}

fn place(window: Window, t: i64, max_wait: i64, unit_ms: i64) -> Result<Place, GrantError> {
    if t >= window.hi {
        return Ok(Place::Renew);
    }
    if t < window.lo {
        let behind = window.lo.saturating_sub(t);
        if behind <= max_wait {
            return Ok(Place::Wait);
        }
        return Err(GrantError::ClockBeforeWindow {
            behind_ms: behind.saturating_mul(unit_ms),
            window_start_unix_ms: 0, // filled in by the caller, who knows the epoch
            max_wait_ms: max_wait.saturating_mul(unit_ms),
        });
    }
    Ok(Place::Inside)
}

fn with_start(e: GrantError, start_unix_ms: i64) -> GrantError {
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

/// An xid12 generator bound to a grant: machine id = the grant's slot (big-endian 3 bytes),
/// every id's second inside the window. The caller gives the pid and the next counter value
/// as for [`xid::Generator::next`].
#[derive(Clone, Copy, Debug)]
pub struct XidGrant {
    generator: xid::Generator,
    last: Option<Xid>,
    slot: u32,
    window: Window,
    max_wait_s: i64,
}

fn checked_xid_slot(slot: i64) -> Result<u32, GrantError> {
    match u32::try_from(slot) {
        Ok(s) if s <= MAX_MACHINE => Ok(s),
        _ => Err(GrantError::SlotOutOfRange {
            slot,
            max: MAX_MACHINE.into(),
        }),
    }
}

fn machine_bytes(slot: u32) -> [u8; 3] {
    let [_, a, b, c] = slot.to_be_bytes();
    [a, b, c]
}

impl XidGrant {
    /// A generator that has made nothing yet, for the grant of `slot` over `window` (unix
    /// seconds). A clock up to `max_wait_s` before the window waits; further is an error.
    pub fn new(slot: i64, window: Window, max_wait_s: i64) -> Result<XidGrant, GrantError> {
        Ok(XidGrant {
            generator: xid::Generator::new(),
            last: None,
            slot: checked_xid_slot(slot)?,
            window,
            max_wait_s: max_wait_s.max(0),
        })
    }

    /// Binds to a renewed grant (same slot, later `hi`) or a new one (maybe another slot).
    /// The high-water mark stays: the next id is greater than every id made before.
    pub fn rebind(&mut self, slot: i64, window: Window) -> Result<(), GrantError> {
        self.slot = checked_xid_slot(slot)?;
        self.window = window;
        Ok(())
    }

    /// The next id at clock reading `now` (unix s), with this pid and counter value (see the
    /// module's rules). A step back of the clock keeps the last second; a counter wrap
    /// borrows the next one, up to the window's end.
    pub fn next(&mut self, now: i64, pid: u16, counter: u32) -> Result<GrantStep<Xid>, GrantError> {
        match place(self.window, now, self.max_wait_s, 1000) {
            Err(e) => return Err(with_start(e, self.window.lo.saturating_mul(1000))),
            Ok(Place::Renew) => return Ok(GrantStep::Renew),
            Ok(Place::Wait) => return Ok(GrantStep::WaitUntil(self.window.lo)),
            Ok(Place::Inside) => {}
        }
        let mut copy = self.generator;
        let id = copy.next(now, machine_bytes(self.slot), pid, counter)?;
        let time = i64::from(id.time());
        if time >= self.window.hi {
            return Ok(GrantStep::Renew);
        }
        if time < self.window.lo {
            // Not reachable: the id's second is at least `now`, which is at least `lo`.
            return Ok(GrantStep::WaitUntil(self.window.lo));
        }
        self.generator = copy;
        self.last = Some(id);
        Ok(GrantStep::Issued(id))
    }

    /// The error to raise when the clock reads `now` (unix s) at or after the window's end and
    /// a renewal did not move it: how far ahead the clock is.
    pub fn after_window(&self, now: i64) -> GrantError {
        GrantError::ClockAfterWindow {
            ahead_ms: now.saturating_sub(self.window.hi).saturating_mul(1000),
            window_end_unix_ms: self.window.hi.saturating_mul(1000),
        }
    }

    pub fn slot(&self) -> u32 {
        self.slot
    }

    pub fn window(&self) -> Window {
        self.window
    }

    pub fn max_wait_s(&self) -> i64 {
        self.max_wait_s
    }

    /// The last id made, under any grant.
    pub fn last_id(&self) -> Option<Xid> {
        self.last
    }

    /// The id-time (unix s) of the last id made, under any grant.
    pub fn last_id_time(&self) -> Option<i64> {
        self.last.map(|id| i64::from(id.time()))
    }

    /// The id-time of the last id made under the grant bound now (its slot, inside its
    /// window), which is what a release reports; `None` if it made none.
    pub fn grant_last_id_time(&self) -> Option<i64> {
        let id = self.last?;
        let t = i64::from(id.time());
        (id.machine() == machine_bytes(self.slot) && self.window.contains(t)).then_some(t)
    }
}

#[cfg(test)]
mod tests {}
