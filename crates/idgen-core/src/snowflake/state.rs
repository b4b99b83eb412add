//! The generator's state machine, with an injected clock.

use super::layout::{compose_unchecked, since_epoch, TIMESTAMP_SHIFT};
use super::{
    checked_worker, Config, Mark, MarkKind, SnowflakeError, MAX_SEQUENCE, MAX_TIMESTAMP, MAX_WORKER,
};

/// What the caller must do after [`SnowflakeState::next`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A fresh id; the state now remembers it.
    Issued(i64),
    /// No id can be issued yet: release the lock, wait until the clock reads at least this
    /// unix millisecond, then call `next` again with a fresh reading. The state is unchanged.
    WaitUntil(i64),
    /// Only with a lease ([`Config::lease_ms`] > 0): the next id would be above the lease.
    /// Persist this id as the new mark (durably, e.g. a file and an fsync), then call
    /// [`SnowflakeState::lease_extended`] with it and `next` again. Keep the lock meanwhile,
    /// so that one caller persists while the others wait. The state is unchanged.
    ExtendLease(i64),
}

/// Generator state, shared by all callers of one generator (e.g. in PostgreSQL shared memory
/// under a lock). Plain integers only, so any bit pattern is a valid (if odd) state; all-zero
/// (`Default`, [`SnowflakeState::new`]) means "nothing issued yet".
///
/// The state remembers the last issued id itself, not just its millisecond, and every new id
/// must be strictly greater. That keeps one state free of duplicates even when the worker or
/// the epoch changes between calls:
/// - a lower worker in the same millisecond waits for the next millisecond;
/// - an earlier epoch makes ids jump ahead, which is harmless;
/// - a later epoch makes new ids lower: the state waits (within `max_backward_ms`) or fails
///   with [`SnowflakeError::EpochChanged`] until real time has caught up with the ids
///   already issued.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SnowflakeState {
    /// Last issued id; meaningful only when `issued != 0`.
    pub(super) last_id: i64,
    /// Epoch (unix ms) in force when `last_id` was issued; used to explain errors.
    pub(super) last_epoch_ms: i64,
    /// Number of ids issued by this state (saturating); 0 means none yet.
    pub(super) issued: u64,
    /// Nonzero when `last_id` is a mark this state was resumed from (see [`Self::resume`]).
    pub(super) resumed: u64,
    /// Highest id that may be issued without persisting a new mark (with a lease).
    pub(super) lease_id: i64,
}

impl SnowflakeState {
    /// A state that has issued nothing.
    pub const fn new() -> Self {
        SnowflakeState {
            last_id: 0,
            last_epoch_ms: 0,
            issued: 0,
            resumed: 0,
            lease_id: 0,
        }
    }

    /// A state whose every id is above `mark` (the high-water mark kept across a restart),
    /// which also stands as the persisted lease. `None`: a fresh state.
    pub fn resume(mark: Option<Mark>) -> Self {
        match mark {
            None => Self::new(),
            Some(m) => SnowflakeState {
                last_id: m.id,
                last_epoch_ms: m.epoch_ms,
                issued: 0,
                resumed: 1,
                lease_id: m.id,
            },
        }
    }

    /// Every id has to be above `last_id`: nothing is known before the first id or mark.
    fn has_last(&self) -> bool {
        self.issued != 0 || self.resumed != 0
    }

    /// The last issued id (or the mark resumed from, if nothing was issued since), if any.
    pub fn last_id(&self) -> Option<i64> {
        self.has_last().then_some(self.last_id)
    }

    /// What to persist at a clean shutdown: the exact high-water mark, if there is one.
    pub fn shutdown_mark(&self) -> Option<Mark> {
        self.last_id().map(|id| Mark {
            kind: MarkKind::Shutdown,
            id,
            epoch_ms: self.last_epoch_ms,
        })
    }

    /// The caller persisted `lease_id` (from [`Step::ExtendLease`]): ids up to it may go out.
    pub fn lease_extended(&mut self, lease_id: i64) {
        self.lease_id = self.lease_id.max(lease_id);
    }

    /// The mark to persist for a lease from [`Step::ExtendLease`], under the epoch of `cfg`.
    pub fn lease_mark(lease_id: i64, cfg: &Config) -> Mark {
        Mark {
            kind: MarkKind::Lease,
            id: lease_id,
            epoch_ms: cfg.epoch_ms,
        }
    }

    /// Raises the state to `mark`, a lease another writer of the same ids persisted (replayed
    /// from WAL: the primary's lease on a standby, or this server's own in crash recovery):
    /// every later id is above it, and the state stands as after [`Self::resume`] (nothing
    /// issued since the mark, so a clock far behind it is [`SnowflakeError::BehindRestoredMark`]).
    /// A mark at or below what the state already has changes nothing. Returns whether the
    /// state was raised.
    pub fn raise_to(&mut self, mark: Mark) -> bool {
        if self.has_last() && self.last_id >= mark.id {
            return false;
        }
        self.last_id = mark.id;
        self.last_epoch_ms = mark.epoch_ms;
        self.issued = 0;
        self.resumed = 1;
        // Ids above the new floor but not above the lease this state persisted itself are
        // still covered by that lease; the floor itself is persisted (it was logged).
        self.lease_id = self.lease_id.max(mark.id);
        true
    }

    /// The highest id covered by the persisted lease.
    pub fn lease_id(&self) -> i64 {
        self.lease_id
    }

    /// How many ids this state has issued (saturates at `u64::MAX`). Only the tests use it.
    #[cfg(test)]
    pub fn issued_count(&self) -> u64 {
        self.issued
    }

    /// Tries to issue the next id at clock reading `now_unix_ms`.
    ///
    /// - `Ok(Step::Issued(id))`: `id` carries the millisecond `now_unix_ms` and is strictly
    ///   greater than every id this state issued before.
    /// - `Ok(Step::WaitUntil(t))`: the current millisecond is used up (4096 ids, or a lower
    ///   worker than the last id's) or the clock is behind the last issued id by at most
    ///   `cfg.max_backward_ms`; call again once the clock reads `t` or later.
    /// - `Err(..)`: bad configuration, a time outside the 41-bit range, or the clock (or the
    ///   epoch) moved back too far. The state is left unchanged on errors and waits, so a
    ///   later call with a good clock works.
    /// - `Ok(Step::ExtendLease(l))`: only with `cfg.lease_ms > 0`, see [`Step::ExtendLease`].
    pub fn next(&mut self, now_unix_ms: i64, cfg: &Config) -> Result<Step, SnowflakeError> {
        let worker = checked_worker(cfg.worker as i64)?;
        let now_ms = since_epoch(now_unix_ms, cfg.epoch_ms)?;
        // Range of the ids of (now_ms, worker): [base, base + MAX_SEQUENCE].
        let base = compose_unchecked(now_ms, worker, 0);

        if !self.has_last() || self.last_id < base {
            return Ok(self.issue(base, cfg));
        }
        let last = self.last_id;
        // Here 0 <= base <= last, so `last - base` cannot overflow.
        if last - base < MAX_SEQUENCE as i64 {
            // Same millisecond and worker as the last id, sequence not exhausted.
            return Ok(self.issue(last + 1, cfg));
        }

        // No id of (now_ms, worker) is above `last`: find the first millisecond that has one.
        let last_ms = (last as u64) >> TIMESTAMP_SHIFT;
        let highest_at_last_ms = compose_unchecked(last_ms, worker, MAX_SEQUENCE);
        let target_ms = if highest_at_last_ms > last {
            last_ms
        } else {
            last_ms + 1
        };
        if target_ms > MAX_TIMESTAMP {
            return Err(SnowflakeError::TimestampOutOfRange {
                ms_since_epoch: target_ms,
            });
        }
        let behind_ms = last_ms.saturating_sub(now_ms);
        if behind_ms > cfg.max_backward_ms {
            let limit_ms = cfg.max_backward_ms;
            return Err(if self.issued == 0 {
                SnowflakeError::BehindRestoredMark {
                    behind_ms,
                    limit_ms,
                }
            } else if self.last_epoch_ms != cfg.epoch_ms {
                SnowflakeError::EpochChanged {
                    old_epoch_ms: self.last_epoch_ms,
                    new_epoch_ms: cfg.epoch_ms,
                    behind_ms,
                    limit_ms: cfg.max_backward_ms,
                }
            } else {
                SnowflakeError::ClockMovedBack {
                    behind_ms,
                    limit_ms: cfg.max_backward_ms,
                }
            });
        }
        // target_ms <= MAX_TIMESTAMP and epoch_ms <= MAX_EPOCH_MS: no overflow.
        Ok(Step::WaitUntil(cfg.epoch_ms + target_ms as i64))
    }

    fn issue(&mut self, id: i64, cfg: &Config) -> Step {
        if cfg.lease_ms > 0 && id > self.lease_id {
            // 0 <= id, so its millisecond is at most MAX_TIMESTAMP: no overflow.
            let ms = ((id as u64) >> TIMESTAMP_SHIFT).saturating_add(cfg.lease_ms);
            return Step::ExtendLease(compose_unchecked(
                ms.min(MAX_TIMESTAMP),
                MAX_WORKER,
                MAX_SEQUENCE,
            ));
        }
        self.last_id = id;
        self.last_epoch_ms = cfg.epoch_ms;
        self.issued = self.issued.saturating_add(1);
        Step::Issued(id)
    }
}
