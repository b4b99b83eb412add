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
//! Nothing in this module panics; every failure is a [`SnowflakeError`] value. What a user
//! reads (message, SQLSTATE, setting names) is the glue's business.
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
