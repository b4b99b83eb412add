//! The Snowflake lease in WAL (docs/formats.md §7), on PostgreSQL 15 and later: a custom WAL
//! resource manager with one record type, "snowflake lease", so that replication carries the
//! high-water mark to standbys and crash recovery replays it.
//!
//! - **Written** by the backend that extends the lease (`super::functions`), before the mark
//!   file and before any id above the old lease goes out; the record is flushed
//!   (`XLogFlush`), so it is on disk, and then streamed, ahead of every WAL record that carries
//!   one of those ids (a row, its commit).
//! - **Replayed** by the startup process (a standby, crash recovery, point-in-time recovery):
//!   the shared generator state rises to the logged lease (`super::state::raise_to_replayed`),
//!   which also writes it to the mark file. A standby promoted later thus issues only ids above
//!   every lease of the old primary that reached it, whatever its clock says.
//!
//! PostgreSQL 14 has no custom resource managers: there [`log_lease`] logs nothing and
//! [`register`] registers nothing (the README says what that leaves out).

use idgen_core::snowflake::Mark;

#[cfg(not(feature = "pg14"))]
mod rmgr {
    use super::*;
    use crate::errors::PgReport;
    use pgrx::prelude::*;
    use pgrx::{pg_sys, PgSqlErrorCode};

    /// The resource manager id, in PostgreSQL's range for extensions (128 ..= 255). Not 128
    /// (`RM_EXPERIMENTAL_ID`), which every extension under development takes, so pg_idgen loads
    /// next to them. It has to be the same on a primary and its standbys, and for as long as WAL
    /// holds records of it: changing it makes that WAL unreadable.
    pub const RMGR_ID: u8 = 201;
    /// The resource manager's name (`pg_get_wal_resource_managers()`, `pg_walinspect`).
    pub const RMGR_NAME: &std::ffi::CStr = c"pg_idgen";
    /// The record type of a lease: the high four bits of `xl_info` (the low four are PostgreSQL's).
    pub const XLOG_SNOWFLAKE_LEASE: u8 = 0x10;

    /// Registers the resource manager; from `_PG_init` while the library is preloaded (the
    /// only time PostgreSQL allows it).
    pub fn register() {
        let rmgr = pg_sys::RmgrData {
            rm_name: RMGR_NAME.as_ptr(),
            rm_redo: Some(redo),
            rm_desc: Some(desc),
            rm_identify: Some(identify),
            rm_startup: None,
            rm_cleanup: None,
            rm_mask: None,
            rm_decode: None,
        };
        // PostgreSQL copies the struct; the name is static.
        unsafe { pg_sys::RegisterCustomRmgr(RMGR_ID, &rmgr as *const _ as _) };
    }

    /// Logs `mark` as a lease and flushes it. Errors (out of WAL space, recovery) are
    /// PostgreSQL's own and raised from here.
    pub fn log_lease(mark: &Mark) {
        let bytes = mark.encode_wal_lease();
        unsafe {
            pg_sys::XLogBeginInsert();
            pg_sys::XLogRegisterData(bytes.as_ptr() as _, bytes.len() as _);
            let lsn = pg_sys::XLogInsert(RMGR_ID, XLOG_SNOWFLAKE_LEASE);
            pg_sys::XLogFlush(lsn);
        }
    }

    /// The record's type and main data.
    unsafe fn record<'a>(reader: *mut pg_sys::XLogReaderState) -> (u8, &'a [u8]) {
        let decoded = &*(*reader).record;
        let info = decoded.header.xl_info & !(pg_sys::XLR_INFO_MASK as u8);
        let data = if decoded.main_data.is_null() || decoded.main_data_len == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(
                decoded.main_data as *const u8,
                decoded.main_data_len as usize,
            )
        };
        (info, data)
    }

    fn lease_of(info: u8, data: &[u8]) -> Result<Mark, String> {
        if info != XLOG_SNOWFLAKE_LEASE {
            return Err(format!("unknown record type {info:#04x}"));
        }
        Mark::decode_wal_lease(data).map_err(|e| format!("invalid snowflake lease ({e:?})"))
    }

    #[pg_guard]
    unsafe extern "C-unwind" fn redo(reader: *mut pg_sys::XLogReaderState) {
        let (info, data) = record(reader);
        match lease_of(info, data) {
            Ok(mark) => crate::snowflake::state::raise_to_replayed(mark),
            // A record this pg_idgen cannot read (a newer primary's): stop rather than go on
            // without the floor it carries, as PostgreSQL's own redo does.
            Err(why) => PgReport::new(
                PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                format!("pg_idgen WAL record: {why}"),
            )
            .hint("Install the same pg_idgen version on the primary and its standbys.")
            .raise(),
        }
    }

    #[pg_guard]
    unsafe extern "C-unwind" fn desc(
        buf: pg_sys::StringInfo,
        reader: *mut pg_sys::XLogReaderState,
    ) {
        let (info, data) = record(reader);
        let text = match lease_of(info, data) {
            Ok(mark) => format!("id {} epoch {}", mark.id, mark.epoch_ms),
            Err(why) => why,
        };
        let text = std::ffi::CString::new(text).unwrap_or_default();
        pg_sys::appendStringInfoString(buf, text.as_ptr());
    }

    #[pg_guard]
    unsafe extern "C-unwind" fn identify(info: u8) -> *const std::ffi::c_char {
        if info & !(pg_sys::XLR_INFO_MASK as u8) == XLOG_SNOWFLAKE_LEASE {
            c"SNOWFLAKE_LEASE".as_ptr()
        } else {
            std::ptr::null()
        }
    }
}

#[cfg(not(feature = "pg14"))]
pub use rmgr::{log_lease, register};

/// PostgreSQL 14: no custom resource managers; the lease is only in the mark file.
#[cfg(feature = "pg14")]
pub fn register() {}

/// PostgreSQL 14: nothing to log (see [`register`]).
#[cfg(feature = "pg14")]
pub fn log_lease(_mark: &Mark) {}
