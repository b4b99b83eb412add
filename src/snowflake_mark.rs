//! The Snowflake high-water mark on disk: the file, the postmaster's hooks that read it at
//! startup and write it at a clean shutdown, and the durable write of a lease while running.
//! What the mark means (and what a state does with it) is `idgen_core::snowflake`'s business.
//!
//! The file is `pg_idgen.snowflake` in the data directory (every server process runs there).
//! It is replaced atomically: written to `pg_idgen.snowflake.tmp`, flushed, renamed over the
//! old one and the directory flushed, so a crash leaves either the old mark or the new one.
//! Flushes follow the server's `fsync` setting, like PostgreSQL's own files.

use crate::errors::PgReport;
use idgen_core::snowflake::{Mark, MarkFileError, MarkKind, SnowflakeState};
use pgrx::prelude::*;
use pgrx::{pg_sys, PgLogLevel, PgSqlErrorCode};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;

/// Relative to the data directory.
pub const FILE: &str = "pg_idgen.snowflake";
const TEMP_FILE: &str = "pg_idgen.snowflake.tmp";

fn fsync_enabled() -> bool {
    unsafe { pg_sys::enableFsync }
}

/// Replaces the file with `mark`, durably (with `fsync` on). On failure the old file is left.
pub fn write(mark: &Mark) -> Result<(), (&'static str, io::Error)> {
    let bytes = mark.encode();
    let result = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(TEMP_FILE)?;
        file.write_all(&bytes)?;
        if fsync_enabled() {
            file.sync_all()?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(TEMP_FILE);
        return Err((TEMP_FILE, e));
    }
    fs::rename(TEMP_FILE, FILE).map_err(|e| (FILE, e))?;
    if fsync_enabled() {
        File::open(".")
            .and_then(|dir| dir.sync_all())
            .map_err(|e| (".", e))?;
    }
    Ok(())
}

/// SQLSTATE for a failed file operation, as PostgreSQL's `errcode_for_file_access` picks it.
fn file_error_code(e: &io::Error) -> PgSqlErrorCode {
    use io::ErrorKind::*;
    use PgSqlErrorCode::*;
    match e.kind() {
        StorageFull | QuotaExceeded => ERRCODE_DISK_FULL,
        PermissionDenied => ERRCODE_INSUFFICIENT_PRIVILEGE,
        NotFound => ERRCODE_UNDEFINED_FILE,
        _ => ERRCODE_IO_ERROR,
    }
}

fn file_error(path: &str, e: &io::Error) -> PgReport {
    let message = match path {
        "." => "could not fsync the data directory".to_string(),
        FILE => format!("could not rename file \"{TEMP_FILE}\" to \"{FILE}\""),
        _ => format!("could not write file \"{path}\""),
    };
    PgReport::new(file_error_code(e), format!("{message}: {e}"))
}

/// Persists a lease from a backend, under the generator's lock. On failure, the error to
/// raise once the lock is released (no id may go out then).
pub fn persist_lease(mark: &Mark) -> Result<(), PgReport> {
    write(mark).map_err(|(path, e)| {
        file_error(path, &e).detail(
            "gen_snowflake() records how far its ids may go before it issues ids beyond that \
             point, so that a crash cannot make it repeat them; no id was issued.",
        )
    })
}

/// The mark found at startup, or None (with a LOG or WARNING saying why) when there is no
/// usable one.
fn read() -> Option<Mark> {
    let bytes = match fs::read(FILE) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            PgReport::new(
                PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
                format!("pg_idgen: no snowflake high-water mark file \"{FILE}\", starting fresh"),
            )
            .log(PgLogLevel::LOG);
            return None;
        }
        Err(e) => {
            unusable(&format!("could not read file \"{FILE}\": {e}"));
            return None;
        }
    };
    match Mark::decode(&bytes) {
        Ok(mark) => {
            let how = match mark.kind {
                MarkKind::Shutdown => "the last id issued before a clean shutdown",
                MarkKind::Lease => "a lease: the server did not shut down cleanly",
            };
            PgReport::new(
                PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
                format!(
                    "pg_idgen: snowflake ids continue above {} from \"{FILE}\" ({how})",
                    mark.id
                ),
            )
            .log(PgLogLevel::LOG);
            Some(mark)
        }
        Err(e) => {
            let why = match e {
                MarkFileError::WrongLength { len } => {
                    format!("it has {len} bytes instead of {}", Mark::FILE_LEN)
                }
                MarkFileError::BadMagic => "it is not a pg_idgen snowflake mark file".into(),
                MarkFileError::UnsupportedVersion { version } => {
                    format!("its format version {version} is unknown to this pg_idgen")
                }
                MarkFileError::BadChecksum => "its checksum does not match".into(),
                MarkFileError::BadField => "it holds a value out of range".into(),
            };
            unusable(&format!(
                "invalid snowflake high-water mark file \"{FILE}\": {why}"
            ));
            None
        }
    }
}

fn unusable(message: &str) {
    PgReport::new(PgSqlErrorCode::ERRCODE_DATA_CORRUPTED, message)
        .detail(
            "Snowflake ids start from the clock alone: if the clock is now behind ids issued \
             before this start, new ids can repeat them.",
        )
        .hint(format!(
            "Check the server's clock. The file is rewritten on the first gen_snowflake() call; \
             remove \"{FILE}\" to silence this warning."
        ))
        .log(PgLogLevel::WARNING);
}

/// The generator's first state, evaluated in the shared memory startup hook: resumed from the
/// file in the postmaster (at startup and after a crash reinitialized shared memory), where it
/// also arranges for the mark to be written at exit.
pub fn startup_state() -> SnowflakeState {
    if unsafe { pg_sys::IsUnderPostmaster } {
        // A child attaching to existing shared memory (EXEC_BACKEND builds): the value is
        // not used, the postmaster's is.
        return SnowflakeState::new();
    }
    unsafe { pg_sys::on_shmem_exit(Some(write_at_exit), pg_sys::Datum::from(0)) };
    SnowflakeState::resume(read())
}

/// The postmaster's shared memory exit callback. With code 0 (a smart, fast or immediate
/// shutdown) every other server process has exited, so the state is final: write it as the
/// exact mark. With another code (shared memory reinitialized after a crash) write nothing and
/// let the last lease stand, as pg_stat_statements does not dump its file after a crash.
#[pg_guard]
unsafe extern "C-unwind" fn write_at_exit(code: std::ffi::c_int, _arg: pg_sys::Datum) {
    if code != 0 {
        return;
    }
    // A process killed by an immediate shutdown may have died holding the lock. The
    // postmaster only tries it once: a lock left held means the lease stays, which is safe.
    let Some(state) = crate::shmem::snowflake().try_lock() else {
        PgReport::new(
            PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE,
            format!("pg_idgen: snowflake generator lock still held at exit; \"{FILE}\" keeps the last lease"),
        )
        .log(PgLogLevel::LOG);
        return;
    };
    let mark = state.shutdown_mark();
    drop(state);
    let Some(mark) = mark else {
        return;
    };
    if let Err((path, e)) = write(&mark) {
        file_error(path, &e)
            .detail(
                "The last lease written stays in place: after a restart, snowflake ids \
                 continue above it.",
            )
            .log(PgLogLevel::LOG);
    }
}
