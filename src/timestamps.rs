//! timestamptz <-> unix time for the generators and decoders.

use crate::errors::datetime_overflow;
use idgen_core::pgtime;
use pgrx::prelude::*;

pub fn out_of_range(message: impl Into<String>) -> ! {
    datetime_overflow(message).raise()
}

fn finite_micros(ts: TimestampWithTimeZone) -> i64 {
    if !ts.is_finite() {
        let which = if is_minus_infinity(ts) {
            "-infinity"
        } else {
            "infinity"
        };
        out_of_range(format!("timestamp out of range: {which} has no id"));
    }
    ts.into_inner()
}

pub fn is_minus_infinity(ts: TimestampWithTimeZone) -> bool {
    !ts.is_finite() && ts.into_inner() < 0
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

fn clock(id: libc::clockid_t) -> libc::timespec {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Cannot fail for these clock ids on Linux.
    unsafe { libc::clock_gettime(id, &mut now) };
    now
}

/// The wall clock's unix second, from the coarse clock: a few times cheaper than the
/// precise one and late by at most a scheduler tick, which a one-second field can afford.
pub fn now_unix_seconds() -> i64 {
    clock(libc::CLOCK_REALTIME_COARSE).tv_sec
}

/// The wall clock's unix millisecond (negative before 1970, which the callers reject).
pub fn now_unix_millis() -> i64 {
    let now = clock(libc::CLOCK_REALTIME);
    now.tv_sec * 1000 + now.tv_nsec / 1_000_000
}
