//! rapkey: the domain's check, builders, parsers and prefix ranges.

use crate::errors::{invalid_text, sentence, PgError};
use idgen_core::rapkey::{self, RapkeyError};
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;

fn invalid_rapkey(input: &str, error: RapkeyError) -> ! {
    invalid_text("rapkey", input, sentence(&error.to_string()))
}

fn invalid_argument(what: &str, error: RapkeyError) -> ! {
    PgError::new(
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!("invalid rapkey {what}"),
    )
    .detail(sentence(&error.to_string()))
    .raise()
}

#[pg_extern(sql = false)]
fn rapkey_is_valid(key: &str) -> bool {
    rapkey::is_valid(key)
}

/// The domain's CHECK: true, or an error saying what is wrong (a bare `false` would only
/// say "violates check constraint").
#[pg_extern(sql = false)]
fn rapkey_domain_check(key: &str) -> bool {
    match rapkey::validate(key) {
        Ok(()) => true,
        Err(error) => {
            let mut report = PgError::new(
                PgSqlErrorCode::ERRCODE_CHECK_VIOLATION,
                "value for domain rapkey violates check constraint \"rapkey_check\"",
            )
            .detail(format!("\"{key}\": {}", sentence(&error.to_string())));
            if !error.is_checksum() {
                report = report.hint("A rapkey is type.segment[.segment…]-c: a type of 2 to 8 letters, 1 to 5 segments of [a-z0-9], and a check character.");
            }
            report.raise()
        }
    }
}

#[pg_extern(sql = false)]
fn rapkey_check_char(body: &str) -> String {
    rapkey::check_char(body)
        .unwrap_or_else(|e| invalid_argument("body", e))
        .to_string()
}

#[pg_extern(sql = false)]
fn rapkey_build(kind: &str, segments: Array<&str>) -> String {
    let parts: Vec<&str> = segments
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.unwrap_or_else(|| {
                PgError::new(
                    PgSqlErrorCode::ERRCODE_NULL_VALUE_NOT_ALLOWED,
                    format!("rapkey segment {} is NULL", i + 1),
                )
                .raise()
            })
        })
        .collect();
    rapkey::build(kind, &parts).unwrap_or_else(|e| invalid_argument("part", e))
}

#[pg_extern(sql = false)]
fn to_rapkey(input: &str) -> String {
    rapkey::normalize(input).unwrap_or_else(|e| invalid_rapkey(input, e))
}

fn parsed(key: &str) -> rapkey::ParsedKey<'_> {
    rapkey::parse(key).unwrap_or_else(|e| invalid_rapkey(key, e))
}

#[pg_extern(sql = false)]
fn rapkey_type(key: &str) -> String {
    parsed(key).kind.to_string()
}

#[pg_extern(sql = false)]
fn rapkey_segments(key: &str) -> Vec<String> {
    parsed(key).segments.iter().map(|s| s.to_string()).collect()
}

/// Segment `n` (1-based), or NULL past the last one, as array subscripts behave.
#[pg_extern(sql = false)]
fn rapkey_segment(key: &str, n: i32) -> Option<String> {
    let segments = parsed(key).segments;
    usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| segments.get(i))
        .map(|s| s.to_string())
}

#[pg_extern(sql = false)]
fn rapkey_prefix_lo(prefix: &str) -> String {
    rapkey::prefix_range(prefix)
        .unwrap_or_else(|e| invalid_argument("prefix", e))
        .0
}

#[pg_extern(sql = false)]
fn rapkey_prefix_hi(prefix: &str) -> String {
    rapkey::prefix_range(prefix)
        .unwrap_or_else(|e| invalid_argument("prefix", e))
        .1
}

#[pg_extern(sql = false)]
fn rapkey_normalize_prefix(prefix: &str) -> String {
    rapkey::normalize_prefix(prefix).unwrap_or_else(|e| invalid_argument("prefix", e))
}
