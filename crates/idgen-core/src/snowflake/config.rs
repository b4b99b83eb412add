//! A generator's settings, read by the caller before each call.

use super::DEFAULT_EPOCH_MS;

/// Suggested default for how far the clock may step back before generation fails, in ms.
/// (ntpd steps the clock only for offsets above 128 ms and slews smaller ones, so a bound
/// of a second absorbs a typical step without failing.)
pub const DEFAULT_MAX_BACKWARD_MS: u64 = 1000;

/// Suggested lease: persisting once a second at most keeps the cost off the common path (the
/// server writes its mark file and, on PostgreSQL 15 and later, logs one WAL record and flushes
/// it per lease), and after a crash or a failover the first new ids are at most this far ahead
/// of the old ones. A shorter lease (pgEdge logs 30 ms ahead) would shorten that wait at the
/// price of a flush every few milliseconds of ids.
pub const DEFAULT_LEASE_MS: u64 = 1000;

/// Generator settings, read by the caller (e.g. from settings) before each call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Epoch in unix milliseconds, `0..=MAX_EPOCH_MS`.
    pub epoch_ms: i64,
    /// Worker id, `0..=MAX_WORKER`.
    pub worker: u16,
    /// How far (ms) the clock may be behind the last issued id before `next` fails instead
    /// of asking the caller to wait.
    pub max_backward_ms: u64,
    /// How far ahead of the id being issued (ms) a new lease reaches; 0: no lease, the
    /// state never asks for one (nothing is persisted while running).
    pub lease_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            epoch_ms: DEFAULT_EPOCH_MS,
            worker: 0,
            max_backward_ms: DEFAULT_MAX_BACKWARD_MS,
            lease_ms: 0,
        }
    }
}

#[cfg(test)]
impl Config {
    /// Checks the worker and the epoch. Only the tests use it.
    pub fn validate(&self) -> Result<(), super::SnowflakeError> {
        super::checked_worker(self.worker as i64)?;
        super::validate_epoch(self.epoch_ms)
    }
}
