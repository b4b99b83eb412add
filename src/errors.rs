//! PostgreSQL errors raised from the glue: one message, one SQLSTATE, never a Rust panic text.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{pg_sys, PgLogLevel, PgSqlErrorCode};
use std::borrow::Cow;

pub struct PgError {
    code: PgSqlErrorCode,
    message: String,
    detail: Option<String>,
    hint: Option<String>,
}

impl PgError {
    pub fn new(code: PgSqlErrorCode, message: impl Into<String>) -> Self {
        PgError {
            code,
            message: message.into(),
            detail: None,
            hint: None,
        }
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    #[track_caller]
    pub fn raise(self) -> ! {
        self.report(PgLogLevel::ERROR);
        unreachable!("ERROR-level reports do not return")
    }

    /// Reports at any level; below ERROR (LOG, WARNING) it returns.
    #[track_caller]
    pub fn report(self, level: PgLogLevel) {
        let mut report = ErrorReport::new(self.code, self.message, "pg_idgen");
        if let Some(detail) = self.detail {
            report = report.set_detail(detail);
        }
        if let Some(hint) = self.hint {
            report = report.set_hint(hint);
        }
        report.report(level);
    }

    /// Reports the error the way an input function must: softly, into the caller's
    /// `ErrorSaveContext` when it passed one (PostgreSQL 16+: `pg_input_is_valid`,
    /// `COPY … ON_ERROR`), and then returns; otherwise raises it.
    #[track_caller]
    pub fn raise_or_save(self, fcinfo: pg_sys::FunctionCallInfo) {
        #[cfg(any(feature = "pg16", feature = "pg17", feature = "pg18"))]
        if let Some(escontext) = soft::error_save_context(fcinfo) {
            return soft::save(self, escontext);
        }
        let _ = fcinfo;
        self.raise()
    }
}

/// PostgreSQL's error-building functions, which pgrx leaves out of its bindings (it keeps them
/// private to its own ereport); the C signatures. They are not guarded: an ERROR inside them
/// longjmps straight to PostgreSQL, so a caller must hold nothing with a destructor around them.
pub mod ffi {
    use pgrx::pg_sys::Oid;
    use std::ffi::{c_char, c_int};

    unsafe extern "C-unwind" {
        pub fn errstart(elevel: c_int, domain: *const c_char) -> bool;
        pub fn errfinish(filename: *const c_char, lineno: c_int, funcname: *const c_char);
        pub fn errcode(sqlerrcode: c_int) -> c_int;
        pub fn errmsg(fmt: *const c_char, ...) -> c_int;
        pub fn errdetail(fmt: *const c_char, ...) -> c_int;
        pub fn errhint(fmt: *const c_char, ...) -> c_int;
        /// The schema, type and constraint names of a domain's CHECK violation.
        pub fn errdomainconstraint(datatype: Oid, conname: *const c_char) -> c_int;
        /// The schema and type names of an error about a type.
        pub fn errdatatype(datatype: Oid) -> c_int;
    }
}

/// Soft errors (`ereturn`/`errsave` in C), which PostgreSQL has from version 16.
#[cfg(any(feature = "pg16", feature = "pg17", feature = "pg18"))]
mod soft {
    use super::ffi::{errcode, errdetail, errhint, errmsg};
    use super::PgError;
    use pgrx::pg_sys;
    use std::ffi::{c_int, CString};

    /// The call's `fcinfo->context` when it is an `ErrorSaveContext`.
    pub fn error_save_context(fcinfo: pg_sys::FunctionCallInfo) -> Option<*mut pg_sys::Node> {
        unsafe {
            let context = fcinfo.as_ref()?.context;
            (!context.is_null() && (*context).type_ == pg_sys::NodeTag::T_ErrorSaveContext)
                .then_some(context)
        }
    }

    /// What `errsave(context, errcode(…), errmsg(…), errdetail(…), errhint(…))` does: marks the
    /// context as failed and, when the caller wants details, stores the whole error in it.
    pub fn save(error: PgError, context: *mut pg_sys::Node) {
        let text = |s: String| CString::new(s.replace('\0', "")).expect("NULs removed");
        let message = text(error.message);
        let detail = error.detail.map(text);
        let hint = error.hint.map(text);
        unsafe {
            if !pg_sys::errsave_start(context, std::ptr::null()) {
                return; // only the failure was asked for, and it is now recorded
            }
            errcode(error.code as c_int);
            errmsg(c"%s".as_ptr(), message.as_ptr());
            if let Some(detail) = &detail {
                errdetail(c"%s".as_ptr(), detail.as_ptr());
            }
            if let Some(hint) = &hint {
                errhint(c"%s".as_ptr(), hint.as_ptr());
            }
            // PostgreSQL keeps these two pointers, as it does C's __FILE__ and __func__.
            pg_sys::errsave_finish(context, c"pg_idgen".as_ptr(), 0, c"input function".as_ptr());
        }
    }
}

/// `invalid input syntax for type T: "input"` (22P02), as PostgreSQL's own input functions say it.
pub fn invalid_text(type_name: &str, input: &str, why: impl Into<String>) -> PgError {
    PgError::new(
        PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        format!(
            "invalid input syntax for type {type_name}: {}",
            quoted(input)
        ),
    )
    .detail(why)
}

/// A value quoted for a message. A message never carries unbounded input: past
/// `QUOTED_CHARS` characters the value is cut, and its length is given instead.
pub fn quoted(value: &str) -> String {
    const QUOTED_CHARS: usize = 40;
    match value.char_indices().nth(QUOTED_CHARS) {
        None => format!("\"{value}\""),
        Some((cut, _)) => format!(
            "\"{}...\" ({} characters)",
            &value[..cut],
            value.chars().count()
        ),
    }
}

pub fn invalid_parameter(message: impl Into<String>) -> ! {
    PgError::new(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message).raise()
}

/// Text from the server as a Rust string. In a database whose encoding is not UTF-8 the bytes
/// may not be UTF-8: then every non-ASCII byte becomes `?`, which keeps validation and
/// messages correct in any server encoding (ids and keys are ASCII, so such text is
/// invalid input anyway).
pub fn server_text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => Cow::Owned(
            bytes
                .iter()
                .map(|&b| if b.is_ascii() { b as char } else { '?' })
                .collect(),
        ),
    }
}
