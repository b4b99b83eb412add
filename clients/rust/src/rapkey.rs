//! rapkeys (`ord.cn.sh.202407.8842-2`): the server's grammar and Damm check character.
//!
//! `type . seg [. seg]{0,4} - c`: a type of 2–8 letters, 1 to 5 segments of 1–32 characters
//! `[a-z0-9]`, at most 128 characters, then `-` and the check character over the body.

use crate::Error;
use idgen_core::rapkey::{self as core, Given, RapkeyError};
pub use idgen_core::rapkey::{
    CHECK_ALPHABET, MAX_KEY_LEN, MAX_SEGMENTS, MAX_SEGMENT_LEN, MAX_TYPE_LEN, MIN_TYPE_LEN,
};

/// The error of `given`.
fn refused(given: Given) -> impl FnOnce(RapkeyError) -> Error {
    |error| Error::Rapkey { given, error }
}

/// The error of a key given as text.
fn key(text: &str) -> impl FnOnce(RapkeyError) -> Error + '_ {
    move |error| Error::Rapkey {
        given: Given::Key(text.to_string()),
        error,
    }
}

/// True iff `key` is a valid rapkey in its canonical (lowercase) form, like the server's
/// `rapkey_is_valid`. Never fails.
pub fn is_valid(key: &str) -> bool {
    core::is_valid(key)
}

/// `Ok` for a valid key, else an error saying why (grammar, or the expected check character).
pub fn validate(key: &str) -> Result<(), Error> {
    core::validate(key).map_err(self::key(key))
}

/// The check character of a body (`type.seg…`, lowercase, without `-c`), like
/// `rapkey_check_char`.
pub fn check_char(body: &str) -> Result<char, Error> {
    core::check_char(body).map_err(refused(Given::Body))
}

/// A key from a type and 1 to 5 segments, each trimmed and lowercased, with its check
/// character, like `rapkey_build`; an error names the bad part.
pub fn build(kind: &str, segments: &[&str]) -> Result<String, Error> {
    core::build(kind, segments).map_err(refused(Given::Part))
}

/// The canonical form of user input, like `to_rapkey`: trimmed, lowercased, validated.
pub fn normalize(input: &str) -> Result<String, Error> {
    core::normalize(input).map_err(key(input))
}

/// The half-open range `[lo, hi)` holding exactly the keys under `prefix` (a type, or
/// `type.seg…` of whole parts), like `rapkey_prefix_lo`/`rapkey_prefix_hi`: query with
/// `key >= lo AND key < hi` (byte order, as the `rapkey` domain's `COLLATE "C"`).
pub fn prefix_range(prefix: &str) -> Result<(String, String), Error> {
    core::prefix_range(prefix).map_err(refused(Given::Prefix))
}

/// A key split into its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub kind: String,
    pub segments: Vec<String>,
    pub check: char,
}

/// Validates `key` and splits it into type, segments and check character.
pub fn parse(key: &str) -> Result<Parsed, Error> {
    let p = core::parse(key).map_err(self::key(key))?;
    Ok(Parsed {
        kind: p.kind.to_string(),
        segments: p.segments.iter().map(|s| s.to_string()).collect(),
        check: p.check,
    })
}
