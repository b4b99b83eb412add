//! The Snowflake SQL functions: generation from the cluster-wide state, decoders and bounds.

use super::{mark, state, wal};
use crate::errors::PgReport;
use crate::{guc, shmem, timestamps};
use idgen_core::snowflake::{self, Config, SettingNames, SnowflakeError, SnowflakeState, Step};
use pgrx::prelude::*;
use pgrx::{pg_sys, PgSqlErrorCode};

/// Every snowflake error as PostgreSQL reports it: the SQLSTATE is picked here, the words are
/// the core's (`SnowflakeError::words`), naming the server's settings.
fn raise(error: SnowflakeError) -> ! {
    use PgSqlErrorCode::*;
    use SnowflakeError::*;
    let epoch = guc::EPOCH_NAME;
    let code = match error {
        WorkerOutOfRange { .. }
        | SequenceOutOfRange { .. }
        | EpochOutOfRange { .. }
        | NegativeId { .. } => ERRCODE_INVALID_PARAMETER_VALUE,
        TimestampOutOfRange { .. } | BeforeEpoch { .. } => ERRCODE_DATETIME_FIELD_OVERFLOW,
        ClockMovedBack { .. } | BehindRestoredMark { .. } | EpochChanged { .. } => {
            ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE
        }
    };
    let message = error
        .words(&SettingNames {
            worker_id: guc::WORKER_ID_NAME,
            epoch,
            max_backward_ms: guc::MAX_BACKWARD_MS_NAME,
        })
        .message;
    let mut error_report = PgReport::new(code, message);
    if let BehindRestoredMark { .. } = error {
        let file = mark::FILE;
        error_report = error_report
            .detail(format!(
                "The high-water mark was read at server start from \"{file}\" in the data \
                 directory, or replayed from WAL (a lease a primary logged before this server \
                 was promoted); new ids must be above it, or they could repeat ids issued \
                 before."
            ))
            .hint(format!(
                "Check the server's clock and {epoch}. gen_snowflake() works again once the \
                 clock has caught up. Remove \"{file}\" and restart only if no id above the \
                 mark was ever issued."
            ));
    }
    error_report.raise()
}

fn not_configured(message: &str, hint: &str) -> ! {
    PgReport::new(
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
        let name = guc::WORKER_ID_NAME;
        not_configured(
            &format!("{name} is not set"),
            &format!(
                "Give this cluster a worker id (0 .. {}) unique among the clusters whose \
                 snowflake ids meet, e.g. ALTER SYSTEM SET {name} = 1; SELECT pg_reload_conf();",
                snowflake::MAX_WORKER
            ),
        );
    }
    Config {
        epoch_ms: guc::snowflake_epoch_ms(),
        worker: worker as u16,
        max_backward_ms: guc::MAX_BACKWARD_MS.get() as u64,
        lease_ms: snowflake::DEFAULT_LEASE_MS,
    }
}

/// Waits, without holding the lock, until the clock reaches `unix_ms`. Most waits are for the
/// rest of the current millisecond (its 4096 sequence numbers are used up): those spin on the
/// clock, as a sleep would overshoot by up to a millisecond. Longer waits (the clock moved
/// back) are a latch wait: the backend shows in pg_stat_activity as waiting (wait event type
/// `Extension`), and a cancel or terminate interrupts it at once.
fn wait_until(unix_ms: i64) {
    const EVENTS: u32 = pg_sys::WL_LATCH_SET | pg_sys::WL_TIMEOUT | pg_sys::WL_EXIT_ON_PM_DEATH;
    loop {
        let remaining = unix_ms - timestamps::now_unix_millis();
        if remaining <= 0 {
            return;
        }
        if remaining == 1 {
            std::hint::spin_loop();
        } else {
            unsafe {
                pg_sys::WaitLatch(
                    pg_sys::MyLatch,
                    EVENTS as _,
                    (remaining - 1).min(10_000) as _,
                    pg_sys::PG_WAIT_EXTENSION,
                );
                pg_sys::ResetLatch(pg_sys::MyLatch);
            }
        }
        check_for_interrupts!();
    }
}

/// A server in recovery (a hot standby) issues no ids: its primary issues ids with the same
/// worker id, and the standby's state follows the primary's leases only as far as replay has
/// come. Once promoted it issues ids above every lease it replayed.
fn refuse_in_recovery() {
    if unsafe { pg_sys::RecoveryInProgress() } {
        PgReport::new(
            PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
            "cannot generate snowflake ids during recovery",
        )
        .detail(
            "A standby shares its primary's pg_idgen.worker_id, so its ids would repeat the \
             primary's.",
        )
        .hint("Call gen_snowflake() on the primary; a standby issues ids once promoted.")
        .raise();
    }
}

#[pg_extern(sql = false)]
fn gen_snowflake() -> i64 {
    let cfg = config();
    refuse_in_recovery();
    loop {
        let step = state::shared()
            .lock()
            .next(timestamps::now_unix_millis(), &cfg);
        match step {
            Ok(Step::Issued(id)) => return id,
            Ok(Step::WaitUntil(unix_ms)) => wait_until(unix_ms),
            Ok(Step::ExtendLease(lease)) => extend_lease(lease, &cfg),
            Err(error) => raise(error),
        }
    }
}

/// Persists `lease` as the new high-water mark, then lets the state issue ids up to it. About
/// once a second, every backend that reaches the old lease comes here: the first logs the
/// lease in WAL (flushed; PostgreSQL 15 and later, `super::wal`) and writes the file while the
/// others wait on the writer lock, then find the lease extended and go on. No id above the old
/// lease is issued before both hold the new one, so the lease precedes in WAL every record
/// that carries one of its ids.
fn extend_lease(lease: i64, cfg: &Config) {
    let _writer = state::LEASE_WRITER.exclusive();
    if state::shared().lock().lease_id() >= lease {
        return;
    }
    let mark = SnowflakeState::lease_mark(lease, cfg);
    wal::log_lease(&mark);
    if let Err(persist_error) = mark::persist_lease(&mark) {
        persist_error.raise();
    }
    state::shared().lock().lease_extended(lease);
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
