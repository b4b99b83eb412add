//! timestamptz <-> unix time for the generators and decoders.

use crate::errors::PgError;
use idgen_core::pgtime;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

pub fn out_of_range(message: impl Into<String>) -> ! {
    PgError::new(PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW, message).raise()
}

fn finite_micros(ts: TimestampWithTimeZone) -> i64 {
    if !ts.is_finite() {
        out_of_range("timestamp out of range: infinity has no id");
    }
    ts.into_inner()
}

pub fn unix_seconds(ts: TimestampWithTimeZone) -> i64 {
    pgtime::unix_seconds(finite_micros(ts))
}

pub fn unix_millis(ts: TimestampWithTimeZone) -> i64 {
    pgtime::unix_millis(finite_micros(ts))
}

pub fn from_unix_seconds(seconds: i64) -> TimestampWithTimeZone {
    pgtime::pg_micros_from_unix_seconds(seconds)
        .and_then(|us| TimestampWithTimeZone::try_from(us).ok())
        .unwrap_or_else(|| out_of_range("timestamp out of range"))
}

pub fn from_unix_millis(millis: i64) -> TimestampWithTimeZone {
    pgtime::pg_micros_from_unix_millis(millis)
        .and_then(|us| TimestampWithTimeZone::try_from(us).ok())
        .unwrap_or_else(|| out_of_range("timestamp out of range"))
}

/// The wall clock now, in unix seconds (negative before 1970, which the callers reject).
pub fn now_unix_seconds() -> i64 {
    now_unix_millis().div_euclid(1000)
}

pub fn now_unix_millis() -> i64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}
