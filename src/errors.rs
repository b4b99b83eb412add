//! PostgreSQL errors raised from the glue: one message, one SQLSTATE, never a Rust panic text.

use pgrx::pg_sys::panic::ErrorReport;
use pgrx::{PgLogLevel, PgSqlErrorCode};
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
        let mut report = ErrorReport::new(self.code, self.message, "pg_idgen");
        if let Some(detail) = self.detail {
            report = report.set_detail(detail);
        }
        if let Some(hint) = self.hint {
            report = report.set_hint(hint);
        }
        report.report(PgLogLevel::ERROR);
        unreachable!("ERROR-level reports do not return")
    }
}

/// `invalid input syntax for type T: "input"` (22P02), as PostgreSQL's own input functions say it.
pub fn invalid_text(type_name: &str, input: &str, why: impl Into<String>) -> ! {
    PgError::new(
        PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {type_name}: \"{input}\""),
    )
    .detail(why)
    .raise()
}

pub fn invalid_parameter(message: impl Into<String>) -> ! {
    PgError::new(PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE, message).raise()
}

/// A core error phrase ("wrong check character: …") as a DETAIL sentence ("Wrong … .").
pub fn sentence(phrase: &str) -> String {
    let mut chars = phrase.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
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
