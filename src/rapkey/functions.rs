//! The rapkey SQL functions: validity, builders, accessors and prefix ranges.

use crate::errors::{invalid_text, null_value, worded};
use idgen_core::rapkey::{self, Given, RapkeyError};
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;
use std::borrow::Cow;

// Text arguments arrive as their bytes: pgrx's `&str` panics on text that is not UTF-8
// (a LATIN1 or SQL_ASCII database).
use crate::errors::server_text as text;

fn invalid_rapkey(input: &str, error: RapkeyError) -> ! {
    invalid_text(error.words(&Given::Key(input.to_string()))).raise()
}

/// A body, part or prefix argument: 22023.
fn invalid_argument(given: Given, error: RapkeyError) -> ! {
    worded(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        error.words(&given),
    )
    .raise()
}

#[pg_extern(sql = false)]
fn rapkey_is_valid(key: &[u8]) -> bool {
    rapkey::is_valid(&text(key))
}

// ---------------------------------------------------------------------------------------
// Builders, accessors, prefix ranges

#[pg_extern(sql = false)]
fn rapkey_check_char(body: &[u8]) -> String {
    rapkey::check_char(&text(body))
        .unwrap_or_else(|e| invalid_argument(Given::Body, e))
        .to_string()
}

#[pg_extern(sql = false)]
fn rapkey_build(kind: &[u8], segments: Array<&[u8]>) -> String {
    let parts: Vec<Cow<str>> = segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.map(text)
                .unwrap_or_else(|| null_value(format!("rapkey segment {} is NULL", i + 1)).raise())
        })
        .collect();
    let parts: Vec<&str> = parts.iter().map(|p| p.as_ref()).collect();
    rapkey::build(&text(kind), &parts).unwrap_or_else(|e| invalid_argument(Given::Part, e))
}

#[pg_extern(sql = false)]
fn to_rapkey(input: &[u8]) -> String {
    let input = text(input);
    rapkey::normalize(&input).unwrap_or_else(|e| invalid_rapkey(&input, e))
}

fn parsed(key: &str) -> rapkey::ParsedKey<'_> {
    rapkey::parse(key).unwrap_or_else(|e| invalid_rapkey(key, e))
}

#[pg_extern(sql = false)]
fn rapkey_type(key: &[u8]) -> String {
    parsed(&text(key)).kind.to_string()
}

#[pg_extern(sql = false)]
fn rapkey_segments(key: &[u8]) -> Vec<String> {
    parsed(&text(key))
        .segments
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Segment `n` (1-based), or NULL past the last one, as array subscripts behave.
#[pg_extern(sql = false)]
fn rapkey_segment(key: &[u8], n: i32) -> Option<String> {
    let key = text(key);
    let segments = parsed(&key).segments;
    usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| segments.get(i))
        .map(|s| s.to_string())
}

#[pg_extern(sql = false)]
fn rapkey_prefix_lo(prefix: &[u8]) -> String {
    rapkey::prefix_range(&text(prefix))
        .unwrap_or_else(|e| invalid_argument(Given::Prefix, e))
        .0
}

#[pg_extern(sql = false)]
fn rapkey_prefix_hi(prefix: &[u8]) -> String {
    rapkey::prefix_range(&text(prefix))
        .unwrap_or_else(|e| invalid_argument(Given::Prefix, e))
        .1
}

#[pg_extern(sql = false)]
fn rapkey_normalize_prefix(prefix: &[u8]) -> String {
    rapkey::normalize_prefix(&text(prefix)).unwrap_or_else(|e| invalid_argument(Given::Prefix, e))
}
