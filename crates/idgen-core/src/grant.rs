//! Generators bound to a writer grant (the registry's contract: README.md, "Writers and their
//! identities").
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

#[inline(always)]
fn place(window: Window, t: i64, max_wait: i64, unit_ms: i64) -> Result<Place, GrantError> {
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
    #[inline]
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
mod tests {
    use super::*;
    use crate::snowflake::DEFAULT_EPOCH_MS;
    use proptest::prelude::*;
    use std::collections::{HashMap, HashSet};

    const E: i64 = DEFAULT_EPOCH_MS;
    const N: i64 = 1_700_000_000_000;
    const T0: i64 = N - E;

    fn sf(lo: i64, hi: i64, slot: i64) -> SnowflakeGrant {
        SnowflakeGrant::new(E, slot, Window::new(lo, hi), DEFAULT_MAX_WAIT_MS).unwrap()
    }

    fn issued<T: std::fmt::Debug>(step: Result<GrantStep<T>, GrantError>) -> T {
        match step {
            Ok(GrantStep::Issued(id)) => id,
            other => panic!("expected an id, got {other:?}"),
        }
    }

    #[test]
    fn snowflake_rules() {
        let mut g = sf(T0, T0 + 1000, 5);
        // Before the window: a wait up to max_wait, then an error with its numbers.
        assert_eq!(g.next(N - 5000), Ok(GrantStep::WaitUntil(N)));
        assert_eq!(
            g.next(N - 5001),
            Err(GrantError::ClockBeforeWindow {
                behind_ms: 5001,
                window_start_unix_ms: N,
                max_wait_ms: 5000
            })
        );
        let id = issued(g.next(N));
        assert_eq!(snowflake::worker(id), Ok(5));
        assert_eq!(g.grant_last_id_time(), Some(T0));
        // At and after hi: renew, and nothing changes.
        assert_eq!(g.next(N + 1000), Ok(GrantStep::Renew));
        assert_eq!(g.last_id(), Some(id));
        assert_eq!(
            g.after_window(N + 1500),
            GrantError::ClockAfterWindow {
                ahead_ms: 500,
                window_end_unix_ms: N + 1000
            }
        );
        // A renewal keeps the slot and lo: the last id is still this grant's.
        g.rebind(5, Window::new(T0, T0 + 2000)).unwrap();
        assert_eq!(g.grant_last_id_time(), Some(T0));
        let id2 = issued(g.next(N + 1000));
        assert!(id2 > id);
        // A new grant of another slot: no id under it yet.
        g.rebind(2, Window::new(T0 + 500, T0 + 3000)).unwrap();
        assert_eq!(g.grant_last_id_time(), None);
        assert_eq!(g.last_id_time(), Some(T0 + 1000));
        // Same millisecond, lower slot: wait for the next one.
        assert_eq!(g.next(N + 1000), Ok(GrantStep::WaitUntil(N + 1001)));
        let id3 = issued(g.next(N + 1001));
        assert!(id3 > id2);
        assert_eq!(snowflake::worker(id3), Ok(2));
        assert_eq!(
            g.rebind(1024, Window::new(0, 1)),
            Err(GrantError::SlotOutOfRange {
                slot: 1024,
                max: 1023
            })
        );
        assert!(SnowflakeGrant::new(E, -1, Window::new(0, 1), 0).is_err());
        assert!(SnowflakeGrant::new(-1, 0, Window::new(0, 1), 0).is_err());
    }

    #[test]
    fn snowflake_used_up_last_millisecond_renews() {
        let mut g = sf(T0 - 10, T0 + 1, 1);
        for _ in 0..4096 {
            issued(g.next(N));
        }
        assert_eq!(g.next(N), Ok(GrantStep::Renew));
        g.rebind(1, Window::new(T0 - 10, T0 + 10)).unwrap();
        assert_eq!(g.next(N), Ok(GrantStep::WaitUntil(N + 1)));
        // A step back of up to max_wait waits for the mark; beyond is the plain error.
        assert_eq!(g.next(N - 5), Ok(GrantStep::WaitUntil(N + 1)));
        let mut far = sf(T0 - 10_000, T0 + 10_000, 1);
        issued(far.next(N));
        assert!(matches!(
            far.next(N - 5001),
            Err(GrantError::Snowflake(SnowflakeError::ClockMovedBack {
                behind_ms: 5001,
                limit_ms: 5000
            }))
        ));
    }

    #[test]
    fn xid_rules() {
        let s = 1_700_000_000;
        let mut g = XidGrant::new(0x0a0b0c, Window::new(s, s + 2), 5).unwrap();
        assert_eq!(g.next(s - 5, 1, 0), Ok(GrantStep::WaitUntil(s)));
        assert_eq!(
            g.next(s - 6, 1, 0),
            Err(GrantError::ClockBeforeWindow {
                behind_ms: 6000,
                window_start_unix_ms: s * 1000,
                max_wait_ms: 5000
            })
        );
        let a = issued(g.next(s, 1, 0xffffff));
        assert_eq!(a.machine(), [0x0a, 0x0b, 0x0c]);
        // A counter wrap borrows the next second (inside), then the one after (outside).
        let b = issued(g.next(s, 1, 0));
        assert_eq!(i64::from(b.time()), s + 1);
        assert_eq!(g.grant_last_id_time(), Some(s + 1));
        issued(g.next(s, 1, 0xffffff));
        assert_eq!(g.next(s, 1, 0), Ok(GrantStep::Renew));
        assert_eq!(g.next(s + 2, 1, 1), Ok(GrantStep::Renew));
        assert_eq!(
            g.after_window(s + 3),
            GrantError::ClockAfterWindow {
                ahead_ms: 1000,
                window_end_unix_ms: (s + 2) * 1000
            }
        );
        assert!(XidGrant::new(1 << 24, Window::new(0, 1), 5).is_err());
        assert!(XidGrant::new(-1, Window::new(0, 1), 5).is_err());
    }

    /// A clock change, a call or a rebind, for the single-writer properties.
    #[derive(Clone, Debug)]
    enum Op {
        Clock(i64),
        Next(u32),
        Renew(i64),
        NewGrant { slot: i64, back: i64, len: i64 },
    }

    fn ops(step: i64, max_slot: i64) -> impl Strategy<Value = Vec<Op>> {
        prop::collection::vec(
            prop_oneof![
                3 => (-step..step).prop_map(Op::Clock),
                6 => any::<u32>().prop_map(Op::Next),
                1 => (1..step).prop_map(Op::Renew),
                1 => (0..=max_slot, 0..step, 1..step).prop_map(|(slot, back, len)| Op::NewGrant { slot, back, len }),
            ],
            1..300,
        )
    }

    proptest! {
        /// Every id has the bound slot and an id-time inside the bound window, and is above
        /// every id before it, across renewals and new grants (I2, I4).
        #[test]
        fn snowflake_ids_stay_inside(ops in ops(8000, 1023), slot in 0i64..1024) {
            let mut now = N;
            let mut window = Window::new(T0 - 5000, T0 + 4000);
            let mut g = SnowflakeGrant::new(E, slot, window, 5000).unwrap();
            let mut slot = slot;
            let mut last = -1i64;
            for op in ops {
                match op {
                    Op::Clock(d) => now += d,
                    Op::Next(_) => if let Ok(GrantStep::Issued(id)) = g.next(now) {
                        let p = snowflake::decode(id).unwrap();
                        prop_assert_eq!(i64::from(p.worker), slot);
                        prop_assert!(window.contains(p.ms_since_epoch as i64));
                        prop_assert!(id > last);
                        prop_assert_eq!(g.grant_last_id_time(), Some(p.ms_since_epoch as i64));
                        last = id;
                    },
                    Op::Renew(d) => {
                        window.hi += d;
                        g.rebind(slot, window).unwrap();
                    }
                    Op::NewGrant { slot: s, back, len } => {
                        let t = now - E;
                        window = Window::new(t - back, t + len);
                        slot = s;
                        g.rebind(slot, window).unwrap();
                    }
                }
            }
        }

        #[test]
        fn xid_ids_stay_inside(ops in ops(8, 0xffffff), slot in 0i64..=0xffffff, pid: u16) {
            let mut now = 1_700_000_000i64;
            let mut window = Window::new(now - 5, now + 4);
            let mut g = XidGrant::new(slot, window, 5).unwrap();
            let mut slot = slot;
            let mut last: Option<Xid> = None;
            let mut counter = crate::xid::LocalCounter::starting_at(0xfffff0);
            for op in ops {
                match op {
                    Op::Clock(d) => now += d,
                    Op::Next(c) => {
                        // Mostly consecutive counter values, sometimes a jump (a wrap).
                        let c = if c % 7 == 0 { c } else { counter.take() };
                        if let Ok(GrantStep::Issued(id)) = g.next(now, pid, c) {
                            let [a, b, m] = id.machine();
                            prop_assert_eq!(i64::from(u32::from_be_bytes([0, a, b, m])), slot);
                            prop_assert!(window.contains(id.time().into()));
                            prop_assert!(last.is_none_or(|l| id > l));
                            prop_assert_eq!(g.grant_last_id_time(), Some(i64::from(id.time())));
                            last = Some(id);
                        }
                    }
                    Op::Renew(d) => {
                        window.hi += d;
                        g.rebind(slot, window).unwrap();
                    }
                    Op::NewGrant { slot: s, back, len } => {
                        window = Window::new(now - back, now + len);
                        slot = s;
                        g.rebind(slot, window).unwrap();
                    }
                }
            }
        }
    }

    // ---- I3: a simulated registry and writers with their own clocks ----

    /// A grant in the simulated registry, in id-time units.
    #[derive(Clone, Debug)]
    struct SimGrant {
        writer: usize,
        slot: i64,
        lo: i64,
        hi: i64,
        released: bool,
    }

    /// The registry as the server keeps it: lo = max(server - backdate, the slot's last hi),
    /// hi = server + lease; a renewal only while no one continued the slot; a release moves hi
    /// back to just after the last id.
    struct Registry {
        slots: i64,
        backdate: i64,
        grants: Vec<SimGrant>,
    }

    impl Registry {
        fn last_hi(&self, slot: i64) -> i64 {
            self.grants
                .iter()
                .filter(|g| g.slot == slot)
                .map(|g| g.hi)
                .max()
                .unwrap_or(i64::MIN)
        }

        fn acquire(
            &mut self,
            writer: usize,
            server: i64,
            lease: i64,
            pick: usize,
        ) -> Option<usize> {
            let free: Vec<i64> = (0..self.slots)
                .filter(|s| self.last_hi(*s) <= server)
                .collect();
            if free.is_empty() {
                return None;
            }
            let slot = free[pick % free.len()];
            let lo = (server - self.backdate).max(self.last_hi(slot));
            self.grants.push(SimGrant {
                writer,
                slot,
                lo,
                hi: server + lease,
                released: false,
            });
            Some(self.grants.len() - 1)
        }

        fn renew(&mut self, grant: usize, server: i64, lease: i64) -> Option<i64> {
            let g = &self.grants[grant];
            if g.released || self.last_hi(g.slot) != g.hi {
                return None; // 55000 grant lost
            }
            let hi = g.hi.max(server + lease);
            self.grants[grant].hi = hi;
            Some(hi)
        }

        fn release(&mut self, grant: usize, last: Option<i64>) {
            let g = &mut self.grants[grant];
            let hi = match last {
                Some(t) => (t + 1).clamp(g.lo, g.hi),
                None => g.lo,
            };
            g.hi = g.hi.min(hi.max(g.lo));
            g.released = true;
        }

        /// The grant that covers id-time `t` of `slot`, if any.
        fn writer_of(&self, slot: i64, t: i64) -> Vec<usize> {
            self.grants
                .iter()
                .filter(|g| g.slot == slot && g.lo <= t && t < g.hi)
                .map(|g| g.writer)
                .collect()
        }
    }

    /// Either kind behind one face for the simulation: clocks in ms, ids as u128, id-time in
    /// the kind's unit.
    trait Sim: Sized {
        /// id-time units per ms divisor: 1 (Snowflake) or 1000 (xid12).
        const UNIT: i64;
        fn start(slot: i64, window: Window) -> Self;
        fn next(
            &mut self,
            clock_ms: i64,
            pid: u16,
            counter: u32,
        ) -> Result<GrantStep<u128>, GrantError>;
        fn rebind(&mut self, slot: i64, window: Window);
        fn grant_last(&self) -> Option<i64>;
        /// (slot, id-time) of an id.
        fn parts(id: u128) -> (i64, i64);
        /// Server id-time at server clock `ms`.
        fn id_time(ms: i64) -> i64;
    }

    impl Sim for SnowflakeGrant {
        const UNIT: i64 = 1;
        fn start(slot: i64, window: Window) -> Self {
            SnowflakeGrant::new(E, slot, window, DEFAULT_MAX_WAIT_MS).unwrap()
        }
        fn next(&mut self, clock_ms: i64, _: u16, _: u32) -> Result<GrantStep<u128>, GrantError> {
            SnowflakeGrant::next(self, clock_ms).map(|s| match s {
                GrantStep::Issued(id) => GrantStep::Issued(id as u128),
                GrantStep::WaitUntil(t) => GrantStep::WaitUntil(t),
                GrantStep::Renew => GrantStep::Renew,
            })
        }
        fn rebind(&mut self, slot: i64, window: Window) {
            SnowflakeGrant::rebind(self, slot, window).unwrap()
        }
        fn grant_last(&self) -> Option<i64> {
            self.grant_last_id_time()
        }
        fn parts(id: u128) -> (i64, i64) {
            let p = snowflake::decode(id as i64).unwrap();
            (p.worker.into(), p.ms_since_epoch as i64)
        }
        fn id_time(ms: i64) -> i64 {
            ms - E
        }
    }

    impl Sim for XidGrant {
        const UNIT: i64 = 1000;
        fn start(slot: i64, window: Window) -> Self {
            XidGrant::new(slot, window, DEFAULT_MAX_WAIT_S).unwrap()
        }
        fn next(
            &mut self,
            clock_ms: i64,
            pid: u16,
            counter: u32,
        ) -> Result<GrantStep<u128>, GrantError> {
            XidGrant::next(self, clock_ms.div_euclid(1000), pid, counter).map(|s| match s {
                GrantStep::Issued(id) => {
                    GrantStep::Issued(id.0.iter().fold(0u128, |n, b| n << 8 | u128::from(*b)))
                }
                GrantStep::WaitUntil(t) => GrantStep::WaitUntil(t),
                GrantStep::Renew => GrantStep::Renew,
            })
        }
        fn rebind(&mut self, slot: i64, window: Window) {
            XidGrant::rebind(self, slot, window).unwrap()
        }
        fn grant_last(&self) -> Option<i64> {
            self.grant_last_id_time()
        }
        fn parts(id: u128) -> (i64, i64) {
            (((id >> 40) & 0xff_ffff) as i64, (id >> 64) as i64)
        }
        fn id_time(ms: i64) -> i64 {
            ms.div_euclid(1000)
        }
    }

    /// One event of the simulation.
    #[derive(Clone, Debug)]
    enum Event {
        /// The server's clock (and every writer's) moves on by this many ms.
        Tick(i64),
        /// A writer's clock steps by this many ms (back or forward), within ± a lease of the
        /// server's.
        Step(usize, i64),
        /// A writer reads its clock now and uses the reading at its next `Make` (a pause between
        /// the reading and the id).
        Read(usize),
        /// A writer makes up to this many ids, renewing or acquiring when told to.
        Make(usize, u8),
        /// A background renewal; `true`: its reply is lost (the registry renewed, the writer
        /// does not know).
        Renew(usize, bool),
        /// The writer releases its grant with its last id-time, then acquires a new one later.
        Release(usize),
        /// The writer's process dies (kill -9) and starts again: no release, a fresh generator.
        Crash(usize),
    }

    struct Writer<G> {
        offset: i64,
        reading: Option<i64>,
        generator: Option<G>,
        grant: Option<usize>,
        counter: u32,
    }

    fn events(writers: usize, lease_ms: i64) -> impl Strategy<Value = Vec<Event>> {
        let w = 0..writers;
        prop::collection::vec(
            prop_oneof![
                4 => (0..lease_ms / 2).prop_map(Event::Tick),
                2 => (w.clone(), -lease_ms..lease_ms).prop_map(|(w, d)| Event::Step(w, d)),
                1 => w.clone().prop_map(Event::Read),
                8 => (w.clone(), 1u8..40).prop_map(|(w, n)| Event::Make(w, n)),
                2 => (w.clone(), any::<bool>()).prop_map(|(w, lost)| Event::Renew(w, lost)),
                1 => w.clone().prop_map(Event::Release),
                1 => w.prop_map(Event::Crash),
            ],
            1..400,
        )
    }

    /// Runs a schedule; fails on a duplicate id, an id its writer's grant does not cover, or
    /// an id the registry attributes to another writer. Returns the number of ids made.
    fn simulate<G: Sim>(
        slots: i64,
        lease_ms: i64,
        offsets: &[i64],
        events: &[Event],
        seed: usize,
    ) -> Result<usize, TestCaseError> {
        let lease = lease_ms / G::UNIT;
        let mut reg = Registry {
            slots,
            backdate: 5000 / G::UNIT,
            grants: Vec::new(),
        };
        let mut server_ms = N;
        let mut writers: Vec<Writer<G>> = offsets
            .iter()
            .map(|o| Writer {
                offset: *o,
                reading: None,
                generator: None,
                grant: None,
                counter: 0,
            })
            .collect();
        let mut ids: HashMap<u128, usize> = HashMap::new();
        let mut pick = seed;
        // Every writer has the same pid and counter start: ids differ only by slot and time.
        let pid = 1u16;
        for event in events {
            pick = pick
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match *event {
                Event::Tick(ms) => server_ms += ms,
                Event::Step(w, d) => {
                    writers[w].offset = (writers[w].offset + d).clamp(-lease_ms, lease_ms);
                }
                Event::Read(w) => writers[w].reading = Some(server_ms + writers[w].offset),
                Event::Renew(w, lost) => {
                    if let Some(g) = writers[w].grant {
                        match reg.renew(g, G::id_time(server_ms), lease) {
                            Some(hi) if !lost => {
                                let gr = &reg.grants[g];
                                let window = Window::new(gr.lo, hi);
                                let slot = gr.slot;
                                if let Some(gen) = writers[w].generator.as_mut() {
                                    gen.rebind(slot, window);
                                }
                            }
                            Some(_) => {}
                            None => writers[w].grant = None,
                        }
                    }
                }
                Event::Release(w) => {
                    if let (Some(g), Some(gen)) = (writers[w].grant, writers[w].generator.as_ref())
                    {
                        reg.release(g, gen.grant_last());
                        writers[w].grant = None;
                    }
                }
                Event::Crash(w) => {
                    writers[w].generator = None;
                    writers[w].grant = None;
                    writers[w].counter = 0;
                }
                Event::Make(w, count) => {
                    let clock = writers[w]
                        .reading
                        .take()
                        .unwrap_or(server_ms + writers[w].offset);
                    let mut renewals = 0;
                    let mut made = 0;
                    while made < count && renewals < 3 {
                        let writer = &mut writers[w];
                        if writer.grant.is_none() {
                            let Some(g) = reg.acquire(w, G::id_time(server_ms), lease, pick) else {
                                break;
                            };
                            let gr = &reg.grants[g];
                            let window = Window::new(gr.lo, gr.hi);
                            match writer.generator.as_mut() {
                                Some(gen) => gen.rebind(gr.slot, window),
                                None => writer.generator = Some(G::start(gr.slot, window)),
                            }
                            writer.grant = Some(g);
                        }
                        let gen = writer.generator.as_mut().unwrap();
                        let counter = writer.counter;
                        match gen.next(clock, pid, counter) {
                            Ok(GrantStep::Issued(id)) => {
                                writer.counter = (counter + 1) & 0xff_ffff;
                                made += 1;
                                let (slot, t) = G::parts(id);
                                let gr = &reg.grants[writer.grant.unwrap()];
                                prop_assert_eq!(slot, gr.slot);
                                prop_assert!(
                                    gr.lo <= t && t < gr.hi,
                                    "id-time {} outside [{}, {})",
                                    t,
                                    gr.lo,
                                    gr.hi
                                );
                                if let Some(other) = ids.insert(id, w) {
                                    return Err(TestCaseError::fail(format!(
                                        "duplicate id {id:#x}: writers {other} and {w}"
                                    )));
                                }
                            }
                            Ok(GrantStep::WaitUntil(_)) | Err(_) => break,
                            Ok(GrantStep::Renew) => {
                                renewals += 1;
                                let g = writer.grant.unwrap();
                                match reg.renew(g, G::id_time(server_ms), lease) {
                                    Some(hi) => {
                                        let gr = &reg.grants[g];
                                        gen.rebind(gr.slot, Window::new(gr.lo, hi));
                                    }
                                    None => writer.grant = None,
                                }
                            }
                        }
                    }
                }
            }
        }
        // Provenance after every release: each id is covered by exactly one grant, its
        // writer's.
        for (id, w) in &ids {
            let (slot, t) = G::parts(*id);
            prop_assert_eq!(reg.writer_of(slot, t), vec![*w]);
        }
        // The registry's own invariant: the windows of one slot are disjoint.
        let mut seen: HashSet<(i64, i64)> = HashSet::new();
        for g in &reg.grants {
            for t in g.lo..g.hi.min(g.lo + 2000) {
                prop_assert!(seen.insert((g.slot, t)));
            }
        }
        Ok(ids.len())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// I3: no duplicate across writers with their own clocks (offsets up to ± a lease,
        /// steps back and forth, pauses between reading the clock and making the id, lost
        /// renewal replies, releases, crashes), with few slots so they are reused.
        #[test]
        fn snowflake_writers_never_collide(
            slots in 1i64..4,
            lease in 500i64..8000,
            offsets in prop::collection::vec(-8000i64..8000, 2..6),
            events in events(6, 8000),
            seed: usize,
        ) {
            let offsets: Vec<i64> = offsets.iter().map(|o| (*o).clamp(-lease, lease)).collect();
            let events: Vec<Event> = events.into_iter().filter(|e| writer(e) < offsets.len()).collect();
            simulate::<SnowflakeGrant>(slots, lease, &offsets, &events, seed)?;
        }

        #[test]
        fn xid_writers_never_collide(
            slots in 1i64..4,
            lease_s in 1i64..20,
            offsets in prop::collection::vec(-20_000i64..20_000, 2..6),
            events in events(6, 20_000),
            seed: usize,
        ) {
            let lease = lease_s * 1000;
            let offsets: Vec<i64> = offsets.iter().map(|o| (*o).clamp(-lease, lease)).collect();
            let events: Vec<Event> = events.into_iter().filter(|e| writer(e) < offsets.len()).collect();
            simulate::<XidGrant>(slots, lease, &offsets, &events, seed)?;
        }
    }

    fn writer(e: &Event) -> usize {
        match *e {
            Event::Tick(_) => 0,
            Event::Step(w, _)
            | Event::Read(w)
            | Event::Make(w, _)
            | Event::Renew(w, _)
            | Event::Release(w)
            | Event::Crash(w) => w,
        }
    }

    /// The simulation makes ids at all (a model that refuses everything proves nothing).
    #[test]
    fn simulation_makes_ids() {
        let offsets = [0, 300, -300];
        let mut events = Vec::new();
        for i in 0..200 {
            events.push(Event::Make(i % 3, 20));
            events.push(Event::Tick(400));
            if i % 17 == 0 {
                events.push(Event::Release(i % 3));
            }
        }
        let made = simulate::<SnowflakeGrant>(2, 2000, &offsets, &events, 7).unwrap();
        assert!(made > 2000, "{made}");
        let made = simulate::<XidGrant>(2, 5000, &offsets, &events, 7).unwrap();
        assert!(made > 1000, "{made}");
    }
}
