//! Accessors, constructors from parts, and the per-second bounds for time-range scans.

use super::Xid12;
use crate::datum_out::ByteaDatum;
use crate::errors::invalid_parameter;
use crate::timestamps;
use idgen_core::xid::{time_field, Xid, XidError};
use pgrx::prelude::*;

/// The xid12 time field of a timestamp: its unix second, checked against the 32-bit range.
pub fn time_of(ts: TimestampWithTimeZone) -> u32 {
    time_field(timestamps::unix_seconds(ts)).unwrap_or_else(|e| raise(e))
}

#[pg_extern(sql = false)]
fn xid12_time(value: Xid12) -> TimestampWithTimeZone {
    timestamps::from_unix_seconds(value.0.time().into())
}

#[pg_extern(sql = false)]
fn xid12_machine(value: Xid12) -> ByteaDatum {
    ByteaDatum::new(&value.0.machine())
}

#[pg_extern(sql = false)]
fn xid12_pid(value: Xid12) -> i32 {
    value.0.pid().into()
}

#[pg_extern(sql = false)]
fn xid12_counter(value: Xid12) -> i32 {
    value.0.counter() as i32
}

#[pg_extern(sql = false)]
fn xid12_min(ts: TimestampWithTimeZone) -> Xid12 {
    Xid12(Xid::min_at(time_of(ts)))
}

#[pg_extern(sql = false)]
fn xid12_max(ts: TimestampWithTimeZone) -> Xid12 {
    Xid12(Xid::max_at(time_of(ts)))
}

#[pg_extern(sql = false)]
fn xid12_from_parts(ts: TimestampWithTimeZone, machine: &[u8], pid: i32, counter: i32) -> Xid12 {
    let unix_seconds = timestamps::unix_seconds(ts);
    Xid::from_raw_parts(unix_seconds, machine, pid.into(), counter.into())
        .map(Xid12)
        .unwrap_or_else(|e| raise(e))
}

/// Every xid12 part error as PostgreSQL reports it, in the core's words: times are datetime
/// errors (22008), other parts bad parameters (22023).
pub fn raise(error: XidError) -> ! {
    let message = error.words().message;
    match error {
        XidError::TimeOutOfRange(_) => timestamps::out_of_range(message),
        _ => invalid_parameter(message).raise(),
    }
}
