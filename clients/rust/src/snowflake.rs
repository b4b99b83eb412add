//! Snowflake ids in the application: the server's layout and generator state machine.
//!
//! `| 1 bit: 0 | 41 bits: ms since the epoch | 10 bits: worker | 12 bits: sequence |`, the
//! epoch by default the server's `pg_idgen.snowflake_epoch` default (2010-11-04 01:42:54.657
//! UTC). Give every generator a worker id of its own, distinct from the servers'
//! `pg_idgen.worker_id`s, and ids merge without a conflict.

use crate::Error;
use idgen_core::snowflake::{self as core, Config, SnowflakeState, Step};
pub use idgen_core::snowflake::{
    Parts, DEFAULT_EPOCH_MS, DEFAULT_MAX_BACKWARD_MS, MAX_SEQUENCE, MAX_WORKER,
};
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A clock giving unix milliseconds; the system clock by default, a fake one in tests.
pub type MillisClock = Box<dyn Fn() -> i64 + Send + Sync>;

fn system_millis() -> i64 {
    unix_millis(SystemTime::now())
}

/// Unix milliseconds of a time, rounded down (also before 1970), saturating far away.
fn unix_millis(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => {
            let d = before.duration();
            let whole = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
            if d.as_nanos() % 1_000_000 > 0 {
                whole.saturating_neg() - 1
            } else {
                -whole
            }
        }
    }
}

/// A Snowflake generator, like the server's `gen_snowflake()` for one worker id: strictly
/// increasing ids; more than 4096 in a millisecond wait for the next one; a clock that steps
/// back waits up to [`Snowflake::max_backward_ms`] (default 1 s), beyond that `next_id` is an
/// error, never a duplicate. Thread-safe: one generator per worker id per process.
pub struct Snowflake {
    config: Config,
    clock: MillisClock,
    state: Mutex<SnowflakeState>,
}

impl fmt::Debug for Snowflake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snowflake")
            .field("worker", &self.config.worker)
            .field("epoch_ms", &self.config.epoch_ms)
            .field("max_backward_ms", &self.config.max_backward_ms)
            .finish_non_exhaustive()
    }
}

impl Snowflake {
    /// A generator for `worker` (0 ..= 1023) with the server's default epoch.
    pub fn new(worker: i64) -> Result<Snowflake, Error> {
        Ok(Snowflake {
            config: Config {
                worker: core::checked_worker(worker)?,
                ..Config::default()
            },
            clock: Box::new(system_millis),
            state: Mutex::new(SnowflakeState::new()),
        })
    }

    /// Another epoch, in unix milliseconds (the server's `pg_idgen.snowflake_epoch`).
    pub fn epoch_ms(mut self, epoch_ms: i64) -> Result<Snowflake, Error> {
        core::validate_epoch(epoch_ms)?;
        self.config.epoch_ms = epoch_ms;
        Ok(self)
    }

    /// How far the clock may step back (ms) before `next_id` fails instead of waiting.
    pub fn max_backward_ms(mut self, ms: u64) -> Snowflake {
        self.config.max_backward_ms = ms;
        self
    }

    /// Another clock, in unix milliseconds (tests step it back and forth).
    pub fn clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Snowflake {
        self.clock = Box::new(clock);
        self
    }

    pub fn worker(&self) -> u16 {
        self.config.worker
    }

    pub fn epoch(&self) -> i64 {
        self.config.epoch_ms
    }

    /// The next id. Waits (without holding the lock) while the millisecond is used up or the
    /// clock is a little behind; an error when the clock is further back than the bound or
    /// outside the 41-bit range.
    pub fn next_id(&self) -> Result<i64, Error> {
        loop {
            let now = (self.clock)();
            let step = {
                let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                state.next(now, &self.config)?
            };
            match step {
                Step::Issued(id) => return Ok(id),
                Step::WaitUntil(t) => {
                    // Usually the rest of this millisecond: sleep that long, at least 50 µs.
                    let ms = u64::try_from(t.saturating_sub(now)).unwrap_or(0);
                    std::thread::sleep(Duration::from_millis(ms).max(Duration::from_micros(50)));
                }
                // Only with a lease, which this generator never asks for (lease_ms is 0).
                Step::ExtendLease(lease) => {
                    let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
                    state.lease_extended(lease);
                }
            }
        }
    }
}

/// The three fields of an id; a negative id is an error.
pub fn decode(id: i64) -> Result<Parts, Error> {
    Ok(core::decode(id)?)
}

/// The worker id of an id (`snowflake_worker`).
pub fn worker(id: i64) -> Result<u16, Error> {
    Ok(core::worker(id)?)
}

/// The sequence number of an id (`snowflake_sequence`).
pub fn sequence(id: i64) -> Result<u16, Error> {
    Ok(core::sequence(id)?)
}

/// The unix millisecond of an id made with `epoch_ms`.
pub fn unix_ms(id: i64, epoch_ms: i64) -> Result<i64, Error> {
    Ok(core::unix_ms(id, epoch_ms)?)
}

/// The creation time of an id made with `epoch_ms` (`snowflake_time`).
pub fn time(id: i64, epoch_ms: i64) -> Result<SystemTime, Error> {
    let ms = unix_ms(id, epoch_ms)?;
    // Not negative: the epoch and the offset are.
    Ok(UNIX_EPOCH + Duration::from_millis(ms.unsigned_abs()))
}

/// The smallest id of the millisecond of `time` (worker 0, sequence 0): the lower bound of a
/// time-range scan; 0 before the epoch.
pub fn min_id_at(time: SystemTime, epoch_ms: i64) -> Result<i64, Error> {
    Ok(core::min_id_at(unix_millis(time), epoch_ms)?)
}

/// The largest id of the millisecond of `time` (worker 1023, sequence 4095); -1 before the
/// epoch.
pub fn max_id_at(time: SystemTime, epoch_ms: i64) -> Result<i64, Error> {
    Ok(core::max_id_at(unix_millis(time), epoch_ms)?)
}
