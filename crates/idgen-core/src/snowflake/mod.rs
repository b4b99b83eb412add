//! Snowflake ids: 64-bit, time-ordered, non-negative integers (docs/formats.md §5, and §6 for
//! the mark file).
//!
//! Layout, from the most significant bit:
//!
//! ```text
//! | 1 bit: 0 | 41 bits: ms since the epoch | 10 bits: worker | 12 bits: sequence |
//! ```
//!
//! With the default epoch ([`DEFAULT_EPOCH_MS`], 2010-11-04 01:42:54.657 UTC) the 41-bit
//! timestamp lasts until 2080-07-10 17:30:30.208 UTC; after that generation fails with
//! [`SnowflakeError::TimestampOutOfRange`] instead of wrapping.
//!
//! The generator is [`SnowflakeState`], a pure state machine with an injected clock: a
//! `#[repr(C)]`, `Copy` struct of plain integers meant to live in PostgreSQL shared memory
//! under a lock. [`SnowflakeState::next`] never sleeps; it either issues an id or tells the
//! caller until which unix millisecond to wait ([`Step::WaitUntil`]) before asking again with
//! a fresh clock reading (the caller should release the lock while it waits).
//!
//! Guarantee: within one state every issued id is strictly greater than the previous one,
//! whatever the clock does and even when the worker or the epoch changes between calls (the
//! comparison is made on the id values themselves), so one state never issues a duplicate.
//!
//! Across a restart the state is carried by a [`Mark`], a high-water mark the caller keeps in
//! a file (see [`Mark::encode`] / [`Mark::decode`]): [`SnowflakeState::resume`] starts a state
//! whose every id is above it. With [`Config::lease_ms`] set, the state also keeps a *lease*:
//! before it issues an id above the last persisted mark it asks the caller to persist a new
//! one a little ahead ([`Step::ExtendLease`]), so that after a crash the mark on disk is still
//! above every id issued.
//!
//! Nothing in this module panics; every failure is a [`SnowflakeError`] value, worded by
//! [`SnowflakeError::words`] with the names of the settings of whoever shows it; the SQLSTATE
//! is the glue's business.
//!
//! One file per job: [`layout`](self::layout) (the bits of an id), [`config`](self::config)
//! (a generator's settings), [`mark`](self::mark) (the high-water mark and its file format),
//! [`state`](self::state) (the state machine); their items are all re-exported here.

mod config;
mod layout;
mod mark;
mod state;
#[cfg(test)]
mod tests;

pub use config::*;
pub use layout::*;
pub use mark::*;
pub use state::*;

/// Everything that can go wrong with snowflake ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnowflakeError {
    /// A worker id outside `0..=MAX_WORKER`.
    WorkerOutOfRange { worker: i64 },
    /// A sequence number outside `0..=MAX_SEQUENCE`.
    SequenceOutOfRange { sequence: i64 },
    /// A time more than `MAX_TIMESTAMP` ms after the epoch (does not fit in 41 bits).
    TimestampOutOfRange { ms_since_epoch: u64 },
    /// A time (possibly the current clock reading) earlier than the epoch.
    BeforeEpoch { unix_ms: i64, epoch_ms: i64 },
    /// An epoch outside `0..=MAX_EPOCH_MS`.
    EpochOutOfRange { epoch_ms: i64 },
    /// The clock is further behind the last issued id than the configured bound.
    ClockMovedBack { behind_ms: u64, limit_ms: u64 },
    /// No id was issued since the state was resumed from a [`Mark`], and the clock is further
    /// behind that mark than the configured bound (the clock, or the epoch, went back across
    /// a restart).
    BehindRestoredMark { behind_ms: u64, limit_ms: u64 },
    /// The epoch was moved forward so far that new ids would be lower than the last issued
    /// one by more than the configured bound.
    EpochChanged {
        old_epoch_ms: i64,
        new_epoch_ms: i64,
        behind_ms: u64,
        limit_ms: u64,
    },
    /// A negative bigint is not a snowflake id.
    NegativeId { id: i64 },
}

/// What the settings a Snowflake message refers to are called where it is shown (the server's
/// are its GUCs).
#[derive(Debug, Clone, Copy)]
pub struct SettingNames<'a> {
    pub worker_id: &'a str,
    pub epoch: &'a str,
    pub max_backward_ms: &'a str,
}

impl SnowflakeError {
    /// The message (no DETAIL), naming the settings as `names` calls them.
    pub fn words(&self, names: &SettingNames<'_>) -> crate::words::Words {
        use SnowflakeError::*;
        let (epoch, bound) = (names.epoch, names.max_backward_ms);
        crate::words::Words::new(match *self {
            WorkerOutOfRange { worker } => format!(
                "snowflake worker id {worker} is out of range 0..{MAX_WORKER} (see {})",
                names.worker_id
            ),
            SequenceOutOfRange { sequence } => {
                format!("snowflake sequence {sequence} is out of range 0..{MAX_SEQUENCE}")
            }
            EpochOutOfRange { epoch_ms } => {
                format!("snowflake epoch {epoch_ms} ms is out of range 0..{MAX_EPOCH_MS} ({epoch})")
            }
            NegativeId { id } => {
                format!("invalid snowflake id {id}: snowflake ids are never negative")
            }
            TimestampOutOfRange { ms_since_epoch } => format!(
                "time {ms_since_epoch} ms after the snowflake epoch is beyond the 41-bit \
                 snowflake range (at most {MAX_TIMESTAMP} ms, about 69 years)"
            ),
            BeforeEpoch { unix_ms, epoch_ms } => format!(
                "time {unix_ms} ms since 1970-01-01 is before the snowflake epoch {epoch_ms} ms \
                 ({epoch})"
            ),
            ClockMovedBack {
                behind_ms,
                limit_ms,
            } => format!(
                "clock moved backwards by {behind_ms} ms, more than {bound} ({limit_ms} ms)"
            ),
            BehindRestoredMark {
                behind_ms,
                limit_ms,
            } => format!(
                "clock is {behind_ms} ms behind the last snowflake id issued before the server \
                 started, more than {bound} ({limit_ms} ms)"
            ),
            EpochChanged {
                old_epoch_ms,
                new_epoch_ms,
                behind_ms,
                limit_ms,
            } => format!(
                "{epoch} changed from {old_epoch_ms} to {new_epoch_ms} ms, which puts new ids \
                 {behind_ms} ms behind the last issued id, more than {bound} ({limit_ms} ms)"
            ),
        })
    }
}
