//! Snowflake ids as bigint: generation from the cluster-wide state, decoders and bounds.

use crate::errors::PgError;
use crate::{guc, shmem, timestamps};
use idgen_core::snowflake::{self, Config, SnowflakeError, Step};
use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

fn raise(error: SnowflakeError) -> ! {
    let code = match error.sqlstate() {
        "22008" => PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW,
        "55000" => PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        _ => PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
    };
    PgError::new(code, error.to_string()).raise()
}

fn not_configured(message: &str, hint: &str) -> ! {
    PgError::new(
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        message,
    )
    .hint(hint)
    .raise()
}

fn config() -> Config {
    if !shmem::preloaded() {
        not_configured(
            "gen_snowflake() needs pg_idgen in shared_preload_libraries",
            "Add pg_idgen to shared_preload_libraries in postgresql.conf and restart the server: \
             the state that keeps snowflake ids unique lives in shared memory.",
        );
    }
    let worker = guc::WORKER_ID.get();
    if worker < 0 {
        not_configured(
            "pg_idgen.worker_id is not set",
            "Give this cluster a worker id (0 .. 1023) unique among the clusters whose snowflake ids \
             meet, e.g. ALTER SYSTEM SET pg_idgen.worker_id = 1; SELECT pg_reload_conf();",
        );
    }
    Config {
        epoch_ms: guc::snowflake_epoch_ms(),
        worker: worker as u16,
        max_backward_ms: guc::MAX_BACKWARD_MS.get() as u64,
    }
}

/// Waits, without holding the lock, until the clock reaches `unix_ms`. A latch wait, not a
/// sleep: the backend shows in pg_stat_activity as waiting (wait event type `Extension`), and
/// a cancel or terminate interrupts it at once.
fn wait_until(unix_ms: i64) {
    const EVENTS: u32 = pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH;
    loop {
        let remaining = unix_ms - timestamps::now_unix_millis();
        if remaining <= 0 {
            return;
        }
        unsafe {
            pg_sys::WaitLatch(
                pg_sys::MyLatch,
                EVENTS as _,
                remaining.min(10_000) as _,
                pg_sys::PG_WAIT_EXTENSION,
            );
            pg_sys::ResetLatch(pg_sys::MyLatch);
        }
        check_for_interrupts!();
    }
}

#[pg_extern(sql = false)]
fn gen_snowflake() -> i64 {
    let cfg = config();
    loop {
        let step = {
            let mut state = shmem::SNOWFLAKE.exclusive();
            state.0.next(timestamps::now_unix_millis(), &cfg)
        };
        match step {
            Ok(Step::Issued(id)) => return id,
            Ok(Step::WaitUntil(unix_ms)) => wait_until(unix_ms),
            Err(error) => raise(error),
        }
    }
}

#[pg_extern(sql = false)]
fn snowflake_time(id: i64) -> TimestampWithTimeZone {
    let unix_ms = snowflake::unix_ms(id, guc::snowflake_epoch_ms()).unwrap_or_else(|e| raise(e));
    timestamps::from_unix_millis(unix_ms)
}

#[pg_extern(sql = false)]
fn snowflake_worker(id: i64) -> i32 {
    snowflake::worker(id).unwrap_or_else(|e| raise(e)).into()
}

#[pg_extern(sql = false)]
fn snowflake_sequence(id: i64) -> i32 {
    snowflake::sequence(id).unwrap_or_else(|e| raise(e)).into()
}

#[pg_extern(sql = false)]
fn snowflake_min(ts: TimestampWithTimeZone) -> i64 {
    snowflake::min_id_at(bound_millis(ts), guc::snowflake_epoch_ms()).unwrap_or_else(|e| raise(e))
}

#[pg_extern(sql = false)]
fn snowflake_max(ts: TimestampWithTimeZone) -> i64 {
    snowflake::max_id_at(bound_millis(ts), guc::snowflake_epoch_ms()).unwrap_or_else(|e| raise(e))
}

/// A range bound's unix millisecond. `-infinity` is before every epoch, like any other time
/// before the epoch (whose bounds lie below every id); `infinity` has no id.
fn bound_millis(ts: TimestampWithTimeZone) -> i64 {
    if timestamps::is_minus_infinity(ts) {
        i64::MIN
    } else {
        timestamps::unix_millis(ts)
    }
}
