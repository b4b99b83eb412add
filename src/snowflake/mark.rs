//! The Snowflake high-water mark on disk (docs/formats.md §6): read at startup, written at a
//! clean shutdown, and a lease written durably while running. What the mark means (and what a
//! state does with it) is `idgen_core::snowflake`'s business; when it is read and written is
//! `super::state`'s.
//!
//! The file is `pg_idgen.snowflake` in the data directory (every server process runs there).
//! It is replaced atomically: written to `pg_idgen.snowflake.tmp`, flushed, renamed over the
//! old one and the directory flushed, so a crash leaves either the old mark or the new one.
//! Flushes follow the server's `fsync` setting, like PostgreSQL's own files.

use crate::errors::PgReport;
use idgen_core::snowflake::{Mark, MarkFileError, MarkKind};
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

/// The steps of a write, each of which can fail.
#[derive(Clone, Copy, Debug)]
enum WriteStep {
    /// Writing (and flushing) `TEMP_FILE`.
    WriteTemp,
    /// Renaming `TEMP_FILE` over `FILE`.
    Rename,
    /// Flushing the data directory, so that the rename survives a crash.
    SyncDirectory,
}

/// A failed write: the step, and the operating system's error.
struct WriteError(WriteStep, io::Error);

/// Replaces the file with `mark`, durably (with `fsync` on). On failure the old file is left.
fn write(mark: &Mark) -> Result<(), WriteError> {
    let bytes = mark.encode();
    let step = |step| move |e| WriteError(step, e);
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
        return Err(WriteError(WriteStep::WriteTemp, e));
    }
    fs::rename(TEMP_FILE, FILE).map_err(step(WriteStep::Rename))?;
    if fsync_enabled() {
        File::open(".")
            .and_then(|dir| dir.sync_all())
            .map_err(step(WriteStep::SyncDirectory))?;
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

fn file_error(WriteError(step, e): WriteError) -> PgReport {
    let message = match step {
        WriteStep::WriteTemp => format!("could not write file \"{TEMP_FILE}\""),
        WriteStep::Rename => format!("could not rename file \"{TEMP_FILE}\" to \"{FILE}\""),
        WriteStep::SyncDirectory => "could not fsync the data directory".to_string(),
    };
    PgReport::new(file_error_code(&e), format!("{message}: {e}"))
}

/// Persists a lease from a backend, under the generator's lock. On failure, the error to
/// raise once the lock is released (no id may go out then).
pub fn persist_lease(mark: &Mark) -> Result<(), PgReport> {
    write(mark).map_err(|e| {
        file_error(e).detail(
            "gen_snowflake() records how far its ids may go before it issues ids beyond that \
             point, so that a crash cannot make it repeat them; no id was issued.",
        )
    })
}

/// The mark found at startup, or None (with a LOG or WARNING saying why) when there is no
/// usable one.
pub fn read_at_startup() -> Option<Mark> {
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

/// The postmaster at exit found the generator's lock held (a backend killed holding it).
pub fn lock_held_at_exit() {
    PgReport::new(
        PgSqlErrorCode::ERRCODE_LOCK_NOT_AVAILABLE,
        format!(
            "pg_idgen: snowflake generator lock still held at exit; \"{FILE}\" keeps the last lease"
        ),
    )
    .log(PgLogLevel::LOG);
}

/// Writes the exact mark at a clean shutdown; a failure is logged, and the last lease stays.
pub fn write_at_shutdown(mark: &Mark) {
    if let Err(e) = write(mark) {
        file_error(e)
            .detail(
                "The last lease written stays in place: after a restart, snowflake ids \
                 continue above it.",
            )
            .log(PgLogLevel::LOG);
    }
}

/// Writes a lease replayed from WAL (`super::wal`): on a standby, the primary's lease, so that
/// the standby restarted (or crashed after its promotion) still starts above it. A failure is
/// a WARNING: the replayed lease still holds in memory until this server stops.
#[cfg_attr(feature = "pg14", allow(dead_code))]
pub fn write_replayed(mark: &Mark) {
    if let Err(e) = write(mark) {
        file_error(e)
            .detail(
                "A snowflake lease replayed from WAL holds until the server stops, but not \
                 across a restart that does not replay it again.",
            )
            .log(PgLogLevel::WARNING);
    }
}
