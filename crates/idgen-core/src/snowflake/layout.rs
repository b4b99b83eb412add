//! The bits of an id: 1 sign bit (0), 41 bits of milliseconds since the epoch, 10 bits of
//! worker, 12 bits of sequence (docs/formats.md §5).

use super::SnowflakeError;

/// Largest worker id (10 bits).
pub const MAX_WORKER: u16 = 1023;
/// Largest sequence number within one millisecond (12 bits).
pub const MAX_SEQUENCE: u16 = 4095;
/// Largest timestamp, in milliseconds since the epoch (41 bits).
pub const MAX_TIMESTAMP: u64 = (1 << 41) - 1;
/// Default epoch in unix milliseconds: 2010-11-04 01:42:54.657 UTC (Twitter's).
pub const DEFAULT_EPOCH_MS: i64 = 1288834974657;
/// Largest accepted epoch (unix ms): any id's unix time still fits in an `i64`.
pub const MAX_EPOCH_MS: i64 = i64::MAX - MAX_TIMESTAMP as i64;

pub(crate) const SEQUENCE_BITS: u32 = 12;
pub(crate) const WORKER_BITS: u32 = 10;
pub(crate) const WORKER_SHIFT: u32 = SEQUENCE_BITS;
pub(crate) const TIMESTAMP_SHIFT: u32 = SEQUENCE_BITS + WORKER_BITS;

/// Checks a worker id given as a wider integer (e.g. a SQL `int` or a setting).
pub fn checked_worker(worker: i64) -> Result<u16, SnowflakeError> {
    if (0..=MAX_WORKER as i64).contains(&worker) {
        Ok(worker as u16)
    } else {
        Err(SnowflakeError::WorkerOutOfRange { worker })
    }
}

/// Checks a sequence number given as a wider integer. Only the tests use it.
#[cfg(test)]
pub fn checked_sequence(sequence: i64) -> Result<u16, SnowflakeError> {
    if (0..=MAX_SEQUENCE as i64).contains(&sequence) {
        Ok(sequence as u16)
    } else {
        Err(SnowflakeError::SequenceOutOfRange { sequence })
    }
}

/// Checks an epoch (unix ms): it must lie in `0..=MAX_EPOCH_MS`.
pub fn validate_epoch(epoch_ms: i64) -> Result<(), SnowflakeError> {
    if (0..=MAX_EPOCH_MS).contains(&epoch_ms) {
        Ok(())
    } else {
        Err(SnowflakeError::EpochOutOfRange { epoch_ms })
    }
}

/// Milliseconds since the epoch for a unix time, checked against both ends of the range.
pub(crate) fn since_epoch(unix_ms: i64, epoch_ms: i64) -> Result<u64, SnowflakeError> {
    validate_epoch(epoch_ms)?;
    let diff = unix_ms as i128 - epoch_ms as i128;
    if diff < 0 {
        return Err(SnowflakeError::BeforeEpoch { unix_ms, epoch_ms });
    }
    // epoch_ms >= 0, so 0 <= diff <= i64::MAX and the cast is exact.
    let ms = diff as u64;
    if ms > MAX_TIMESTAMP {
        return Err(SnowflakeError::TimestampOutOfRange { ms_since_epoch: ms });
    }
    Ok(ms)
}

/// Assembles an id from its parts. Fails if any part does not fit its field. Only the tests
/// use it (the generator composes checked parts with `compose_unchecked`).
#[cfg(test)]
pub fn compose(ms_since_epoch: u64, worker: u16, sequence: u16) -> Result<i64, SnowflakeError> {
    if ms_since_epoch > MAX_TIMESTAMP {
        return Err(SnowflakeError::TimestampOutOfRange { ms_since_epoch });
    }
    if worker > MAX_WORKER {
        return Err(SnowflakeError::WorkerOutOfRange {
            worker: worker as i64,
        });
    }
    if sequence > MAX_SEQUENCE {
        return Err(SnowflakeError::SequenceOutOfRange {
            sequence: sequence as i64,
        });
    }
    Ok(compose_unchecked(ms_since_epoch, worker, sequence))
}

/// Parts already checked to fit: the result is in `0..=i64::MAX`.
pub(crate) fn compose_unchecked(ms_since_epoch: u64, worker: u16, sequence: u16) -> i64 {
    ((ms_since_epoch << TIMESTAMP_SHIFT) | ((worker as u64) << WORKER_SHIFT) | sequence as u64)
        as i64
}

/// The three fields of an id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parts {
    /// Milliseconds since the epoch.
    pub ms_since_epoch: u64,
    pub worker: u16,
    pub sequence: u16,
}

/// Splits an id into its fields. Every non-negative `i64` is a valid id; a negative one is
/// an error.
pub fn decode(id: i64) -> Result<Parts, SnowflakeError> {
    if id < 0 {
        return Err(SnowflakeError::NegativeId { id });
    }
    let bits = id as u64;
    Ok(Parts {
        ms_since_epoch: bits >> TIMESTAMP_SHIFT,
        worker: ((bits >> WORKER_SHIFT) & MAX_WORKER as u64) as u16,
        sequence: (bits & MAX_SEQUENCE as u64) as u16,
    })
}

/// Milliseconds since the epoch encoded in an id.
pub fn timestamp_ms(id: i64) -> Result<u64, SnowflakeError> {
    decode(id).map(|p| p.ms_since_epoch)
}

/// Worker id encoded in an id.
pub fn worker(id: i64) -> Result<u16, SnowflakeError> {
    decode(id).map(|p| p.worker)
}

/// Sequence number encoded in an id.
pub fn sequence(id: i64) -> Result<u16, SnowflakeError> {
    decode(id).map(|p| p.sequence)
}

/// Unix time in milliseconds encoded in an id, given the epoch it was generated with.
pub fn unix_ms(id: i64, epoch_ms: i64) -> Result<i64, SnowflakeError> {
    validate_epoch(epoch_ms)?;
    let ms = timestamp_ms(id)?;
    // epoch_ms <= i64::MAX - MAX_TIMESTAMP and ms <= MAX_TIMESTAMP: no overflow.
    Ok(epoch_ms + ms as i64)
}

/// Smallest id of the given unix millisecond (worker 0, sequence 0): the lower bound of a
/// time-range scan. Before the epoch it is 0, below every id, so that an open-ended range
/// `id >= min_id_at(long ago)` holds every id.
pub fn min_id_at(unix_ms: i64, epoch_ms: i64) -> Result<i64, SnowflakeError> {
    match since_epoch(unix_ms, epoch_ms) {
        Ok(ms) => Ok(compose_unchecked(ms, 0, 0)),
        Err(SnowflakeError::BeforeEpoch { .. }) => Ok(0),
        Err(e) => Err(e),
    }
}

/// Largest id of the given unix millisecond (worker 1023, sequence 4095): the upper bound of
/// a time-range scan. Before the epoch it is -1, below every id, so that `id <= max_id_at(t)`
/// holds no id.
pub fn max_id_at(unix_ms: i64, epoch_ms: i64) -> Result<i64, SnowflakeError> {
    match since_epoch(unix_ms, epoch_ms) {
        Ok(ms) => Ok(compose_unchecked(ms, MAX_WORKER, MAX_SEQUENCE)),
        Err(SnowflakeError::BeforeEpoch { .. }) => Ok(-1),
        Err(e) => Err(e),
    }
}
