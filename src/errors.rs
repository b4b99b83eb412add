//! Everything the glue reports to PostgreSQL (errors, soft input errors, LOG and WARNING
//! lines) is a [`PgReport`]: a SQLSTATE, a message, an optional DETAIL and HINT, and
//! optionally the data type and constraint a domain's CHECK names. Every report is built by a
//! constructor here and reaches PostgreSQL through [`emit`], the one sequence of `errstart` /
//! `errsave_start` … `errfinish` / `errsave_finish` calls, with one exception that Rust
//! imposes: an ERROR raised from Rust code with values still to drop ([`PgReport::raise`]) must
//! unwind those frames first, so it travels as a pgrx `ErrorReport` to the function's
//! `#[pg_guard]`, which reports it with the same fields (it cannot carry a data type or a
//! constraint: such a report is raised from a plain frame through [`raise_prepared`]).
//!
//! Messages never carry a NUL: [`PgReport`] drops them as it takes its texts, in one place.

use idgen_core::words::{text_of, Words};
use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{pg_sys, PgLogLevel, PgSqlErrorCode};
use std::borrow::Cow;
use std::ffi::{c_char, c_int, CStr};

/// A report for PostgreSQL: an error to raise or to save softly, or a LOG or WARNING line.
pub struct PgReport {
    code: PgSqlErrorCode,
    message: Vec<u8>,
    detail: Option<Vec<u8>>,
    hint: Option<Vec<u8>>,
    /// The schema and type names of an error about a type (`errdatatype`), and with
    /// `constraint` the constraint of a domain's CHECK (`errdomainconstraint`).
    datatype: Option<pg_sys::Oid>,
    /// A constraint name as the catalog holds it, in the server's encoding.
    constraint: Option<Vec<u8>>,
}

/// The one NUL stripping: a C string ends at the first NUL, and PostgreSQL formats messages
/// as C strings, so a NUL inside a text would silently cut it.
fn without_nul(text: impl Into<Vec<u8>>) -> Vec<u8> {
    let mut bytes = text.into();
    bytes.retain(|&b| b != 0);
    bytes
}

impl PgReport {
    pub fn new(code: PgSqlErrorCode, message: impl Into<String>) -> Self {
        PgReport {
            code,
            message: without_nul(message.into()),
            detail: None,
            hint: None,
            datatype: None,
            constraint: None,
        }
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(without_nul(detail.into()));
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(without_nul(hint.into()));
        self
    }

    /// Raises the report at ERROR from Rust code (inside a `#[pg_extern]` or `#[pg_guard]`
    /// function): the Rust frames unwind to the guard, which reports it.
    #[track_caller]
    pub fn raise(self) -> ! {
        debug_assert!(
            self.datatype.is_none(),
            "a report naming a type or constraint is raised through raise_prepared"
        );
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).into_owned();
        let mut report = ErrorReport::new(self.code, text(self.message), "pg_idgen");
        if let Some(detail) = self.detail {
            report = report.set_detail(text(detail));
        }
        if let Some(hint) = self.hint {
            report = report.set_hint(text(hint));
        }
        report.report(PgLogLevel::ERROR);
        unreachable!("ERROR-level reports do not return")
    }

    /// Reports below ERROR (LOG, WARNING), and returns.
    pub fn log(self, level: PgLogLevel) {
        assert!(level < PgLogLevel::ERROR, "errors are raised, not logged");
        // SAFETY: below ERROR, emit returns; the strings are freed after.
        unsafe { emit(self.prepare(), Target::Level(level)) }
    }

    /// Reports the error the way an input function must: softly, into the caller's
    /// `ErrorSaveContext` when it passed one (PostgreSQL 16+: `pg_input_is_valid`,
    /// `COPY … ON_ERROR`), and then returns; otherwise raises it.
    #[track_caller]
    pub fn raise_or_save(self, fcinfo: pg_sys::FunctionCallInfo) {
        #[cfg(not(any(feature = "pg14", feature = "pg15")))]
        if let Some(context) = error_save_context(fcinfo) {
            // SAFETY: into a soft context, errsave_finish returns.
            return unsafe { emit(self.prepare(), Target::Save(context)) };
        }
        let _ = fcinfo;
        self.raise()
    }

    /// The report as PostgreSQL takes it: its texts copied into the current memory context,
    /// with nothing left to drop, so that it can be raised from a plain frame.
    pub fn prepare(self) -> Prepared {
        fn palloc(bytes: &[u8]) -> *const c_char {
            // SAFETY: a fresh allocation of len + 1 bytes, filled and NUL-terminated; the
            // bytes hold no NUL (without_nul).
            unsafe {
                let out = pg_sys::palloc(bytes.len() + 1).cast::<u8>();
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
                *out.add(bytes.len()) = 0;
                out.cast()
            }
        }
        let optional = |bytes: &Option<Vec<u8>>| bytes.as_deref().map_or(std::ptr::null(), palloc);
        Prepared {
            code: self.code as c_int,
            message: palloc(&self.message),
            detail: optional(&self.detail),
            hint: optional(&self.hint),
            datatype: self.datatype.unwrap_or(pg_sys::InvalidOid),
            constraint: optional(&self.constraint),
        }
    }
}

/// A [`PgReport`] ready for [`emit`]: palloc'd C strings (null where absent) and plain values.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Prepared {
    code: c_int,
    message: *const c_char,
    detail: *const c_char,
    hint: *const c_char,
    datatype: pg_sys::Oid,
    constraint: *const c_char,
}

impl Prepared {
    /// No report: what a guarded `extern` function returns when there is nothing to raise
    /// (an `Option` cannot cross its boundary).
    pub const NOTHING: Prepared = Prepared {
        code: 0,
        message: std::ptr::null(),
        detail: std::ptr::null(),
        hint: std::ptr::null(),
        datatype: pg_sys::InvalidOid,
        constraint: std::ptr::null(),
    };

    pub fn is_nothing(&self) -> bool {
        self.message.is_null()
    }
}

/// Where [`emit`] sends a report.
#[derive(Clone, Copy)]
enum Target {
    /// `errstart(level)`: below ERROR the report is logged and `emit` returns; at ERROR it
    /// does not return (PostgreSQL longjmps to its handler).
    Level(PgLogLevel),
    /// `errsave_start(context)` into a soft `ErrorSaveContext` (PostgreSQL 16+): recorded
    /// there, and `emit` returns.
    #[cfg(not(any(feature = "pg14", feature = "pg15")))]
    Save(*mut pg_sys::Node),
}

/// The one place that writes a report into PostgreSQL's error machinery.
///
/// # Safety
/// At ERROR, every frame between here and PostgreSQL's handler must hold nothing to drop
/// (the longjmp skips them): call it at ERROR only through [`raise_prepared`].
unsafe fn emit(report: Prepared, target: Target) {
    // PostgreSQL keeps the file and function pointers, as it does C's __FILE__ and __func__.
    const FILE: &CStr = c"pg_idgen";
    const FUNCTION: &CStr = c"pg_idgen";
    const DOMAIN: &CStr = c"pg_idgen";
    unsafe {
        let started = match target {
            Target::Level(level) => ffi::errstart(level as c_int, DOMAIN.as_ptr()),
            #[cfg(not(any(feature = "pg14", feature = "pg15")))]
            Target::Save(context) => pg_sys::errsave_start(context, DOMAIN.as_ptr()),
        };
        if started {
            ffi::errcode(report.code);
            ffi::errmsg(c"%s".as_ptr(), report.message);
            if !report.detail.is_null() {
                ffi::errdetail(c"%s".as_ptr(), report.detail);
            }
            if !report.hint.is_null() {
                ffi::errhint(c"%s".as_ptr(), report.hint);
            }
            if report.datatype != pg_sys::InvalidOid {
                if report.constraint.is_null() {
                    ffi::errdatatype(report.datatype);
                } else {
                    ffi::errdomainconstraint(report.datatype, report.constraint);
                }
            }
            match target {
                Target::Level(_) => ffi::errfinish(FILE.as_ptr(), 0, FUNCTION.as_ptr()),
                #[cfg(not(any(feature = "pg14", feature = "pg15")))]
                Target::Save(context) => {
                    pg_sys::errsave_finish(context, FILE.as_ptr(), 0, FUNCTION.as_ptr())
                }
            }
        }
        // Reached below ERROR and for soft errors: PostgreSQL copied the texts.
        for text in [
            report.message,
            report.detail,
            report.hint,
            report.constraint,
        ] {
            if !text.is_null() {
                pg_sys::pfree(text.cast_mut().cast());
            }
        }
    }
}

/// Raises a prepared report at ERROR, as C's `ereport(ERROR, …)` does.
///
/// # Safety
/// Every frame between the caller and PostgreSQL's error handler must hold nothing to drop:
/// call it from the `extern "C-unwind"` function that PostgreSQL called, after its guarded
/// Rust work has returned.
pub unsafe fn raise_prepared(report: Prepared) -> ! {
    unsafe { emit(report, Target::Level(PgLogLevel::ERROR)) };
    // errstart is always true at ERROR, and errfinish does not return from an ERROR.
    std::process::abort()
}

/// PostgreSQL's error-building functions, which pgrx leaves out of its bindings (it keeps them
/// private to its own ereport); the C signatures. They are not guarded: an ERROR inside them
/// longjmps straight to PostgreSQL, so a caller must hold nothing with a destructor around them.
mod ffi {
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

/// The call's `fcinfo->context` when it is a soft `ErrorSaveContext` (PostgreSQL 16+).
#[cfg(not(any(feature = "pg14", feature = "pg15")))]
fn error_save_context(fcinfo: pg_sys::FunctionCallInfo) -> Option<*mut pg_sys::Node> {
    unsafe {
        let context = fcinfo.as_ref()?.context;
        (!context.is_null() && (*context).type_ == pg_sys::NodeTag::T_ErrorSaveContext)
            .then_some(context)
    }
}

// ---------------------------------------------------------------------------------------
// The reports the glue raises, worded once

/// A report of the core's words (`idgen_core::words`: message and DETAIL) with a SQLSTATE.
pub fn worded(code: PgSqlErrorCode, words: Words) -> PgReport {
    let report = PgReport::new(code, words.message);
    match words.detail {
        Some(detail) => report.detail(detail),
        None => report,
    }
}

/// 22P02 (`invalid input syntax for type T: "input"`, as PostgreSQL's own input functions
/// say it) with the core's words.
pub fn invalid_text(words: Words) -> PgReport {
    worded(PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION, words)
}

/// 22023 with a message.
pub fn invalid_parameter(message: impl Into<String>) -> PgReport {
    PgReport::new(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message)
}

/// 22008 with a message: a timestamp outside what a format can hold.
pub fn datetime_overflow(message: impl Into<String>) -> PgReport {
    PgReport::new(PgSqlErrorCode::ERRCODE_DATETIME_FIELD_OVERFLOW, message)
}

/// 22004: a NULL where a value is needed.
pub fn null_value(message: impl Into<String>) -> PgReport {
    PgReport::new(PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED, message)
}

/// A value of a domain that fails its CHECK: 23514, `value for domain D violates check
/// constraint "C"`, with the schema, type and constraint names set as PostgreSQL sets them
/// for any domain CHECK. `constraint` is the name as the catalog holds it (server encoding);
/// without one, the message names no constraint and only the type's names are set.
pub fn domain_violation(
    domain_name: &str,
    datatype: pg_sys::Oid,
    constraint: Option<&CStr>,
) -> PgReport {
    let mut report = PgReport::new(
        PgSqlErrorCode::ERRCODE_CHECK_VIOLATION,
        format!("value for domain {domain_name} violates check constraint"),
    );
    if let Some(name) = constraint {
        report.message.extend_from_slice(b" \"");
        report.message.extend_from_slice(name.to_bytes());
        report.message.push(b'"');
        report.constraint = Some(name.to_bytes().to_vec());
    }
    report.datatype = (datatype != pg_sys::InvalidOid).then_some(datatype);
    report
}

/// Values in messages are quoted by the core's one rule (at most 40 characters shown).
pub use idgen_core::words::quoted;

/// Text from the server as a Rust string. In a database whose encoding is not UTF-8 the bytes
/// may not be UTF-8: then every non-ASCII byte becomes `?` (`idgen_core::words::text_of`),
/// which keeps validation and messages correct in any server encoding (ids and keys are ASCII,
/// so such text is invalid input anyway).
pub fn server_text(bytes: &[u8]) -> Cow<'_, str> {
    text_of(bytes)
}
