//! The offline rule of an edge device (docs/formats.md §10, "Writer registry: edge devices"),
//! pinned by `tests/vectors/edge_traces.json`.
//!
//! An edge device keeps a grant of the registry's `edge` pool in its own SQLite file (the row
//! of `pg_idgen_edge`, `tests/vectors/edge_store.json`) and makes ids offline, for weeks. The
//! rule reads only that row ([`EdgeState`]: the window `[lo_us, hi_us)` in unix microseconds,
//! the slot, the Snowflake epoch, the high-water mark `last_id` / `last_id_us`, whether the
//! registry found the state on another device) and one clock reading `now_us` (unix µs). It
//! does no I/O, reads no clock and never waits: offline there is nobody to wait for.
//!
//! [`EdgeState::next`], in this order:
//! 1. the state was found cloned: [`EdgeRefusal::Cloned`];
//! 2. `now_us < lo_us`: [`EdgeRefusal::ClockBeforeWindow`] (no waiting, unlike §8's writer);
//! 3. `now_us >= hi_us`: [`EdgeRefusal::WindowEnded`];
//! 4. the plain generator of the kind, resumed from the mark, makes the next id at `t` =
//!    `now_us` in the kind's unit (rounded down), with the grant's slot:
//!    - xid12 ([`xid::Generator`]): with no mark, `(t, slot, pid, counter)` from the caller's
//!      [`XidSeed`]; with a mark, its pid and next counter; a clock behind the mark keeps the
//!      mark's second, a counter wrap within it borrows the next second;
//!    - Snowflake ([`SnowflakeState`]): `t`'s millisecond, or after the mark (its next
//!      sequence, else its next millisecond: ahead of the clock, never a wait);
//! 5. the id's id-time in µs (xid12 its second · 10^6, Snowflake `(epoch_ms + ms) · 10^3`)
//!    at or past `hi_us`: [`EdgeRefusal::UsedUp`]; otherwise [`EdgeMade`], the id and the
//!    new mark, which the caller stores with the row the id keys.
//!
//! A releasing sync first stores [`EdgeState::release_end`] as `hi_us`, so the file stops
//! using the id-time the registry is about to free.
//!
//! A state no grant can have (a slot out of range, a bad epoch, a mark of the other kind)
//! is an [`EdgeError`], never a panic.
//!
//! [`xid::Generator`]: crate::xid::Generator
//! [`SnowflakeState`]: crate::snowflake::SnowflakeState

use super::GrantError;
use crate::snowflake::{
    self, Config, Mark, MarkKind, SnowflakeError, SnowflakeState, Step, MAX_TIMESTAMP,
};
use crate::xid::{self, Xid, XidError, MAX_COUNTER};
use std::fmt;

/// Microseconds in a second (xid12's id-time unit).
const US_PER_S: i64 = 1_000_000;
/// Microseconds in a millisecond (Snowflake's id-time unit).
const US_PER_MS: i64 = 1000;
/// The end of xid12's id-time, 2^32 s, in µs.
const XID_END_US: i64 = (1 << 32) * US_PER_S;
/// A Snowflake id's millisecond is its bits above the worker and the sequence.
const MS_SHIFT: u32 = 22;

/// The kind of an edge grant, with what its ids need besides the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    Xid12,
    /// The grant's epoch, unix ms.
    Snowflake {
        epoch_ms: i64,
    },
}

impl EdgeKind {
    /// Microseconds in one unit of the kind's id-time.
    pub fn unit_us(self) -> i64 {
        match self {
            EdgeKind::Xid12 => US_PER_S,
            EdgeKind::Snowflake { .. } => US_PER_MS,
        }
    }

    /// An id-time of the kind (the grant row's `lo_t`, `hi_t`: xid12 unix seconds, Snowflake
    /// ms since the epoch) in unix µs, as the edge file keeps the window. Saturates.
    pub fn id_time_to_unix_us(self, t: i64) -> i64 {
        match self {
            EdgeKind::Xid12 => t.saturating_mul(US_PER_S),
            EdgeKind::Snowflake { epoch_ms } => {
                epoch_ms.saturating_add(t).saturating_mul(US_PER_MS)
            }
        }
    }
}

/// An id an edge device made, or its mark: an xid12 or a Snowflake id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeId {
    Xid(Xid),
    Snowflake(i64),
}

/// The pid and first counter an xid12 edge device uses when it has no mark (the low 16 bits
/// of its process id and a random 24-bit value; the caller draws them). With a mark, the
/// mark's pid and next counter are used instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct XidSeed {
    pub pid: u16,
    pub counter: u32,
}

/// The row an edge device keeps (the columns the rule reads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeState {
    pub kind: EdgeKind,
    /// The xid12 machine id or the Snowflake worker id.
    pub slot: i64,
    /// The window `[lo_us, hi_us)`, unix microseconds.
    pub lo_us: i64,
    pub hi_us: i64,
    /// The high-water mark: the last id made, and its id-time in unix µs.
    pub last_id: Option<EdgeId>,
    pub last_id_us: Option<i64>,
    /// The registry found this state on another device.
    pub cloned: bool,
}

/// An id made: the id, and its id-time in unix µs. Both are the new mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeMade {
    pub id: EdgeId,
    pub id_time_us: i64,
}

/// Why an edge device makes no id now (`tests/vectors/edge_traces.json`'s names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeRefusal {
    /// The registry found this state on another device.
    Cloned,
    /// The clock reads a time before the window (a clock reset, say to 2000).
    ClockBeforeWindow,
    /// The clock reads the window's end or later: sync (renew) first.
    WindowEnded,
    /// The next id's id-time would be at or past the window's end (an xid12 counter wrap into
    /// it, Snowflake's last millisecond full, a clock gone back to a mark near it).
    UsedUp,
}

impl EdgeRefusal {
    /// The name the shared vectors use.
    pub fn name(self) -> &'static str {
        match self {
            EdgeRefusal::Cloned => "cloned",
            EdgeRefusal::ClockBeforeWindow => "clock_before_window",
            EdgeRefusal::WindowEnded => "window_ended",
            EdgeRefusal::UsedUp => "used_up",
        }
    }
}

/// Why [`EdgeState::next`] made no id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeError {
    /// The rule refuses (the state is sound).
    Refused(EdgeRefusal),
    /// The state is no grant's: a slot out of range, a bad epoch, a time outside the kind's
    /// range.
    Invalid(GrantError),
    /// The mark is an id of the other kind.
    MarkOfOtherKind,
}

impl From<EdgeRefusal> for EdgeError {
    fn from(r: EdgeRefusal) -> Self {
        EdgeError::Refused(r)
    }
}

impl fmt::Display for EdgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdgeError::Refused(r) => write!(f, "no id is made: {}", r.name()),
            EdgeError::Invalid(e) => write!(f, "the edge grant's state is invalid: {e:?}"),
            EdgeError::MarkOfOtherKind => f.write_str("the edge grant's mark is of the other kind"),
        }
    }
}

impl std::error::Error for EdgeError {}

impl EdgeState {
    /// The next id at clock reading `now_us` (unix µs), or why none (see the module's rule).
    /// `seed` is used only by an xid12 state with no mark. The state is not changed: the
    /// caller stores the returned mark.
    pub fn next(&self, now_us: i64, seed: XidSeed) -> Result<EdgeMade, EdgeError> {
        if self.cloned {
            return Err(EdgeRefusal::Cloned.into());
        }
        if now_us < self.lo_us {
            return Err(EdgeRefusal::ClockBeforeWindow.into());
        }
        if now_us >= self.hi_us {
            return Err(EdgeRefusal::WindowEnded.into());
        }
        let made = match self.kind {
            EdgeKind::Xid12 => self.next_xid(now_us, seed)?,
            EdgeKind::Snowflake { epoch_ms } => self.next_snowflake(now_us, epoch_ms)?,
        };
        if made.id_time_us >= self.hi_us {
            return Err(EdgeRefusal::UsedUp.into());
        }
        Ok(made)
    }

    fn next_xid(&self, now_us: i64, seed: XidSeed) -> Result<EdgeMade, EdgeError> {
        let machine = xid::machine_from_int(self.slot).map_err(|_| {
            EdgeError::Invalid(GrantError::SlotOutOfRange {
                slot: self.slot,
                max: xid::MAX_MACHINE.into(),
            })
        })?;
        let mark = match self.last_id {
            None => None,
            Some(EdgeId::Xid(m)) => Some(m),
            Some(EdgeId::Snowflake(_)) => return Err(EdgeError::MarkOfOtherKind),
        };
        let (pid, counter) = match mark {
            None => (seed.pid, seed.counter & MAX_COUNTER),
            Some(m) => (m.pid(), (m.counter() + 1) & MAX_COUNTER),
        };
        let mut generator = xid::Generator::resume(mark);
        match generator.next(now_us.div_euclid(US_PER_S), machine, pid, counter) {
            Ok(id) => Ok(EdgeMade {
                id: EdgeId::Xid(id),
                id_time_us: i64::from(id.time()) * US_PER_S,
            }),
            // The clock is inside a window that ends by 2106 (a second at or past 2^32 is
            // past it): only a borrowed second fails, and it would be past the window's end.
            Err(XidError::TimeOutOfRange(_)) if now_us >= 0 && self.hi_us <= XID_END_US => {
                Err(EdgeRefusal::UsedUp.into())
            }
            Err(e) => Err(EdgeError::Invalid(GrantError::Xid(e))),
        }
    }

    fn next_snowflake(&self, now_us: i64, epoch_ms: i64) -> Result<EdgeMade, EdgeError> {
        let invalid = |e: SnowflakeError| EdgeError::Invalid(GrantError::Snowflake(e));
        snowflake::validate_epoch(epoch_ms).map_err(invalid)?;
        let worker = snowflake::checked_worker(self.slot).map_err(|_| {
            EdgeError::Invalid(GrantError::SlotOutOfRange {
                slot: self.slot,
                max: snowflake::MAX_WORKER.into(),
            })
        })?;
        let mark = match self.last_id {
            None => None,
            Some(EdgeId::Snowflake(id)) => Some(Mark {
                kind: MarkKind::Shutdown,
                id,
                epoch_ms,
            }),
            Some(EdgeId::Xid(_)) => return Err(EdgeError::MarkOfOtherKind),
        };
        let config = Config {
            epoch_ms,
            worker,
            // Never an error for a clock behind the mark: the id continues after it.
            max_backward_ms: u64::MAX,
            lease_ms: 0,
        };
        let mut state = SnowflakeState::resume(mark);
        let mut at = now_us.div_euclid(US_PER_MS);
        // A wait is for the mark's millisecond (its next sequence) or the one after it (its
        // sequence full): asked again there, the state makes an id. With lease_ms = 0 it never
        // asks for a lease.
        for _ in 0..3 {
            match state.next(at, &config) {
                Ok(Step::Issued(id)) => {
                    let ms = id >> MS_SHIFT;
                    return Ok(EdgeMade {
                        id: EdgeId::Snowflake(id),
                        id_time_us: epoch_ms.saturating_add(ms).saturating_mul(US_PER_MS),
                    });
                }
                Ok(Step::WaitUntil(t)) => at = t,
                Ok(Step::ExtendLease(_)) => break,
                // The mark's millisecond is the last of the 41-bit range: the next one would
                // be past any window's end.
                Err(SnowflakeError::TimestampOutOfRange { .. })
                    if at.saturating_sub(epoch_ms) <= MAX_TIMESTAMP as i64 =>
                {
                    return Err(EdgeRefusal::UsedUp.into())
                }
                Err(e) => return Err(invalid(e)),
            }
        }
        // Not reachable (see above); refused rather than guessed.
        Err(EdgeRefusal::UsedUp.into())
    }

    /// The window's end a releasing sync stores before it calls the server: one unit of the
    /// kind after the mark's id-time (the registry frees the id-time after it), or `lo_us`
    /// when no id was made; never later than `hi_us`.
    pub fn release_end(&self) -> i64 {
        let end = match self.last_id_us {
            Some(t) => t.saturating_add(self.kind.unit_us()),
            None => self.lo_us,
        };
        end.min(self.hi_us)
    }

    /// The state after `made`: the new mark.
    pub fn with_mark(&self, made: EdgeMade) -> EdgeState {
        EdgeState {
            last_id: Some(made.id),
            last_id_us: Some(made.id_time_us),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const S: i64 = 1_800_000_000;
    const SU: i64 = S * US_PER_S;
    const EPOCH: i64 = snowflake::DEFAULT_EPOCH_MS;
    const SEED: XidSeed = XidSeed {
        pid: 42,
        counter: 7,
    };

    fn xid_state(mark: Option<Xid>) -> EdgeState {
        EdgeState {
            kind: EdgeKind::Xid12,
            slot: 0xc0_0001,
            lo_us: SU,
            hi_us: SU + 60 * US_PER_S,
            last_id: mark.map(EdgeId::Xid),
            last_id_us: mark.map(|m| i64::from(m.time()) * US_PER_S),
            cloned: false,
        }
    }

    fn sf_state(mark: Option<i64>) -> EdgeState {
        EdgeState {
            kind: EdgeKind::Snowflake { epoch_ms: EPOCH },
            slot: 800,
            lo_us: SU,
            hi_us: SU + 60 * US_PER_S,
            last_id: mark.map(EdgeId::Snowflake),
            last_id_us: mark.map(|m| (EPOCH + (m >> 22)) * 1000),
            cloned: false,
        }
    }

    fn xid_at(t: i64, pid: u16, counter: u32) -> Xid {
        Xid::from_raw_parts(t, &[0xc0, 0, 1], pid.into(), counter.into()).unwrap()
    }

    fn refused(r: Result<EdgeMade, EdgeError>) -> EdgeRefusal {
        match r {
            Err(EdgeError::Refused(r)) => r,
            other => panic!("not a refusal: {other:?}"),
        }
    }

    #[test]
    fn refusals_in_their_order() {
        let mut s = xid_state(None);
        s.cloned = true;
        assert_eq!(refused(s.next(SU - 1, SEED)), EdgeRefusal::Cloned);
        s.cloned = false;
        assert_eq!(
            refused(s.next(SU - 1, SEED)),
            EdgeRefusal::ClockBeforeWindow
        );
        assert_eq!(
            refused(s.next(i64::MIN, SEED)),
            EdgeRefusal::ClockBeforeWindow
        );
        assert_eq!(refused(s.next(s.hi_us, SEED)), EdgeRefusal::WindowEnded);
        assert_eq!(refused(s.next(i64::MAX, SEED)), EdgeRefusal::WindowEnded);
        let made = s.next(s.hi_us - 1, SEED).unwrap();
        assert_eq!(made.id, EdgeId::Xid(xid_at(S + 59, 42, 7)));
        assert_eq!(made.id_time_us, SU + 59 * US_PER_S);
    }

    #[test]
    fn xid_continues_after_the_mark_and_borrows_up_to_the_end() {
        let m = xid_at(S + 30, 9, 100);
        let s = xid_state(Some(m));
        let made = s.next(SU + 1, SEED).unwrap();
        assert_eq!(made.id, EdgeId::Xid(xid_at(S + 30, 9, 101)));
        let s = xid_state(Some(xid_at(S + 30, 9, MAX_COUNTER)));
        let made = s.next(SU + 30 * US_PER_S, SEED).unwrap();
        assert_eq!(made.id, EdgeId::Xid(xid_at(S + 31, 9, 0)));
        assert_eq!(made.id_time_us, SU + 31 * US_PER_S);
        let s = xid_state(Some(xid_at(S + 59, 9, MAX_COUNTER)));
        assert_eq!(refused(s.next(SU, SEED)), EdgeRefusal::UsedUp);
    }

    #[test]
    fn snowflake_never_waits() {
        let ms = S * 1000 + 30_000;
        let full = (ms - EPOCH) << 22 | 800 << 12 | 4095;
        let s = sf_state(Some(full));
        let made = s.next(SU, SEED).unwrap();
        assert_eq!(
            made.id,
            EdgeId::Snowflake((ms + 1 - EPOCH) << 22 | 800 << 12)
        );
        assert_eq!(made.id_time_us, (ms + 1) * 1000);
        let last = S * 1000 + 59_999;
        let s = sf_state(Some((last - EPOCH) << 22 | 800 << 12 | 4095));
        assert_eq!(refused(s.next(SU, SEED)), EdgeRefusal::UsedUp);
        let s = sf_state(Some((last - EPOCH) << 22 | 800 << 12 | 4094));
        assert!(s.next(SU, SEED).is_ok());
    }

    #[test]
    fn release_end() {
        let s = xid_state(None);
        assert_eq!(s.release_end(), s.lo_us);
        let s = s.with_mark(s.next(SU + 5 * US_PER_S + 3, SEED).unwrap());
        assert_eq!(s.release_end(), SU + 6 * US_PER_S);
        let s = sf_state(None);
        let s = s.with_mark(s.next(SU + 7_000_250, SEED).unwrap());
        assert_eq!(s.release_end(), SU + 7_001_000);
        let mut s = s;
        s.last_id_us = Some(i64::MAX);
        assert_eq!(s.release_end(), s.hi_us);
    }

    #[test]
    fn a_state_no_grant_has_is_an_error() {
        let mut s = xid_state(None);
        s.slot = 1 << 24;
        assert!(matches!(
            s.next(SU, SEED),
            Err(EdgeError::Invalid(GrantError::SlotOutOfRange { .. }))
        ));
        s.slot = -1;
        assert!(s.next(SU, SEED).is_err());
        let mut s = xid_state(None);
        s.last_id = Some(EdgeId::Snowflake(1));
        assert_eq!(s.next(SU, SEED), Err(EdgeError::MarkOfOtherKind));
        let mut s = sf_state(None);
        s.slot = 1024;
        assert!(matches!(s.next(SU, SEED), Err(EdgeError::Invalid(_))));
        let mut s = sf_state(None);
        s.last_id = Some(EdgeId::Xid(xid_at(S, 0, 0)));
        assert_eq!(s.next(SU, SEED), Err(EdgeError::MarkOfOtherKind));
        // A bad epoch, a clock before the epoch, a negative window.
        let mut s = sf_state(None);
        s.kind = EdgeKind::Snowflake { epoch_ms: -1 };
        assert!(matches!(s.next(SU, SEED), Err(EdgeError::Invalid(_))));
        let mut s = sf_state(None);
        s.lo_us = 0;
        assert!(matches!(s.next(1000, SEED), Err(EdgeError::Invalid(_))));
        let mut s = xid_state(None);
        s.lo_us = -10 * US_PER_S;
        assert!(matches!(
            s.next(-US_PER_S, SEED),
            Err(EdgeError::Invalid(_))
        ));
        // xid12: a borrow past 2106 is past every window's end.
        let mut s = xid_state(Some(xid_at(u32::MAX.into(), 0, MAX_COUNTER)));
        s.lo_us = 0;
        s.hi_us = XID_END_US;
        assert_eq!(refused(s.next(XID_END_US - 1, SEED)), EdgeRefusal::UsedUp);
        // Snowflake: a mark at the end of the 41-bit range, the window past it.
        let mut s = sf_state(Some(i64::MAX));
        s.slot = 1023;
        s.lo_us = EPOCH * 1000;
        s.hi_us = i64::MAX;
        let end_ms = EPOCH + MAX_TIMESTAMP as i64;
        assert_eq!(refused(s.next(end_ms * 1000, SEED)), EdgeRefusal::UsedUp);
        assert_eq!(refused(s.next(EPOCH * 1000, SEED)), EdgeRefusal::UsedUp);
        // Extreme windows saturate instead of overflowing.
        let mut s = sf_state(None);
        s.kind = EdgeKind::Snowflake {
            epoch_ms: snowflake::MAX_EPOCH_MS,
        };
        s.lo_us = i64::MIN;
        s.hi_us = i64::MAX;
        let _ = s.next(i64::MAX - 1, SEED);
        let _ = s.next(0, SEED);
    }

    #[test]
    fn id_time_to_unix_us() {
        assert_eq!(EdgeKind::Xid12.id_time_to_unix_us(S), SU);
        let k = EdgeKind::Snowflake { epoch_ms: EPOCH };
        assert_eq!(k.id_time_to_unix_us(S * 1000 - EPOCH), SU);
        assert_eq!(k.id_time_to_unix_us(i64::MAX), i64::MAX);
    }

    /// One device's life: clock readings anywhere around the window (ahead, behind, stepping
    /// back), renewals that move the end: every id is of the slot, inside the window it was
    /// made in, and greater than the one before; a refusal changes nothing.
    fn life(kind: EdgeKind, slot: i64, steps: Vec<(i64, bool)>, seed: XidSeed) {
        let mut s = EdgeState {
            kind,
            slot,
            lo_us: SU,
            hi_us: SU + 3 * US_PER_S,
            last_id: None,
            last_id_us: None,
            cloned: false,
        };
        for (offset_us, renew) in steps {
            if renew {
                s.hi_us += US_PER_S;
                continue;
            }
            match s.next(SU + offset_us, seed) {
                Ok(made) => {
                    assert!(
                        s.last_id.is_none_or(|m| made.id > m),
                        "{made:?} after {s:?}"
                    );
                    assert!(s.lo_us <= made.id_time_us && made.id_time_us < s.hi_us);
                    match made.id {
                        EdgeId::Xid(x) => {
                            let [a, b, c] = x.machine();
                            assert_eq!(i64::from(u32::from_be_bytes([0, a, b, c])), slot);
                            assert_eq!(i64::from(x.time()) * US_PER_S, made.id_time_us);
                        }
                        EdgeId::Snowflake(id) => {
                            let p = snowflake::decode(id).unwrap();
                            assert_eq!(i64::from(p.worker), slot);
                            assert_eq!((EPOCH + p.ms_since_epoch as i64) * 1000, made.id_time_us);
                        }
                    }
                    s = s.with_mark(made);
                }
                Err(EdgeError::Refused(_)) => {}
                Err(e) => panic!("{e}"),
            }
        }
    }

    proptest! {
        #[test]
        fn xid_ids_increase_inside_the_window(
            slot in 0i64..=0xff_ffff,
            pid: u16,
            counter in 0u32..=MAX_COUNTER,
            steps in proptest::collection::vec((-2_000_000i64..6_000_000, proptest::bool::weighted(0.05)), 1..300),
        ) {
            life(EdgeKind::Xid12, slot, steps, XidSeed { pid, counter });
        }

        #[test]
        fn snowflake_ids_increase_inside_the_window(
            slot in 0i64..=1023,
            steps in proptest::collection::vec((-2_000_000i64..6_000_000, proptest::bool::weighted(0.05)), 1..300),
        ) {
            life(EdgeKind::Snowflake { epoch_ms: EPOCH }, slot, steps, SEED);
        }

        #[test]
        fn snowflake_full_milliseconds_move_ahead_of_the_clock(
            slot in 0i64..=1023,
            n in 1usize..9000,
        ) {
            // Many ids at one clock reading: the sequence wraps into later milliseconds,
            // until the window's end.
            life(EdgeKind::Snowflake { epoch_ms: EPOCH }, slot, vec![(1_000_000, false); n], SEED);
        }

        #[test]
        fn xid_counter_wraps_move_ahead_of_the_clock(
            counter in (MAX_COUNTER - 3)..=MAX_COUNTER,
            n in 1usize..12,
        ) {
            // A counter near its wrap, a mark near the end: borrowed seconds until used up.
            let mut steps = vec![(2_500_000, false)];
            steps.extend(vec![(0, false); n]);
            life(EdgeKind::Xid12, 5, steps, XidSeed { pid: 1, counter });
        }
    }
}
