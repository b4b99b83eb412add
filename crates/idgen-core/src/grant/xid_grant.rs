//! The xid12 generator bound to a grant (rule 4 of the module's list, for xid12).

use super::window::{place, with_start, Place, Window};
use super::{GrantError, GrantStep};
use crate::xid::{self, Xid, MAX_MACHINE};

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
