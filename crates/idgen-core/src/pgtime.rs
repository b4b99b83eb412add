//! PostgreSQL timestamps (microseconds since 2000-01-01 00:00 UTC) and unix time.

pub const PG_EPOCH_UNIX_SECONDS: i64 = 946_684_800;
const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_MILLI: i64 = 1_000;

/// The unix second holding a PostgreSQL timestamp (fractions round down, also before 1970).
pub fn unix_seconds(pg_micros: i64) -> i64 {
    pg_micros.div_euclid(MICROS_PER_SECOND) + PG_EPOCH_UNIX_SECONDS
}

/// The unix millisecond holding a PostgreSQL timestamp.
pub fn unix_millis(pg_micros: i64) -> i64 {
    pg_micros.div_euclid(MICROS_PER_MILLI) + PG_EPOCH_UNIX_SECONDS * 1_000
}

pub fn pg_micros_from_unix_seconds(unix_seconds: i64) -> Option<i64> {
    unix_seconds
        .checked_sub(PG_EPOCH_UNIX_SECONDS)?
        .checked_mul(MICROS_PER_SECOND)
}

pub fn pg_micros_from_unix_millis(unix_millis: i64) -> Option<i64> {
    unix_millis
        .checked_sub(PG_EPOCH_UNIX_SECONDS * 1_000)?
        .checked_mul(MICROS_PER_MILLI)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_both_ways() {
        assert_eq!(unix_seconds(0), PG_EPOCH_UNIX_SECONDS);
        assert_eq!(unix_seconds(-1), PG_EPOCH_UNIX_SECONDS - 1);
        assert_eq!(unix_seconds(1_999_999), PG_EPOCH_UNIX_SECONDS + 1);
        assert_eq!(unix_millis(-1), PG_EPOCH_UNIX_SECONDS * 1000 - 1);
        assert_eq!(
            pg_micros_from_unix_seconds(PG_EPOCH_UNIX_SECONDS + 2),
            Some(2_000_000)
        );
        assert_eq!(
            pg_micros_from_unix_millis(PG_EPOCH_UNIX_SECONDS * 1000 + 3),
            Some(3_000)
        );
        assert_eq!(
            unix_seconds(i64::MAX),
            i64::MAX / 1_000_000 + PG_EPOCH_UNIX_SECONDS
        );
        assert_eq!(pg_micros_from_unix_seconds(i64::MAX), None);
    }
}
