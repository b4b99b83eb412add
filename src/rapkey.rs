//! rapkey: the domain's check, builders, parsers and prefix ranges.

use crate::errors::{self, invalid_parameter, invalid_text, null_value, quoted};
use idgen_core::rapkey::{self, RapkeyError};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::borrow::Cow;
use std::ffi::{c_int, CStr};

// Text arguments arrive as their bytes: pgrx's `&str` panics on text that is not UTF-8
// (a LATIN1 or SQL_ASCII database).
use crate::errors::server_text as text;

/// A character as a message shows it, quoted; a control character is escaped (`'\u{a}'`) so
/// it stays visible.
fn shown_char(c: char) -> String {
    if c.is_control() {
        format!("'\\u{{{:x}}}'", c as u32)
    } else {
        format!("'{c}'")
    }
}

/// Why a key, body, part or prefix is rejected, as a DETAIL sentence: the one place that words
/// the core's errors. Parts of the input are shown through `quoted`, so never unbounded.
fn why(error: &RapkeyError) -> String {
    use rapkey::{
        MAX_BODY_LEN, MAX_KEY_LEN, MAX_SEGMENTS, MAX_SEGMENT_LEN, MAX_TYPE_LEN, MIN_TYPE_LEN,
    };
    use RapkeyError::*;
    match error {
        Empty => "Key is empty.".into(),
        KeyTooLong { len } => {
            format!("Key is too long: {len} characters (at most {MAX_KEY_LEN}).")
        }
        BodyTooLong { len } => format!(
            "Body is too long: {len} characters (at most {MAX_BODY_LEN}, leaving room for '-' \
             and the check character)."
        ),
        MissingCheckSeparator => "Missing '-' before the check character.".into(),
        MissingCheckChar => "Missing check character after '-'.".into(),
        ExtraCheckChars { check } => format!(
            "Expected one check character after '-', found {}.",
            quoted(check)
        ),
        InvalidCheckChar { found } => format!(
            "Check character {} is not one of [0-9a-z~].",
            shown_char(*found)
        ),
        TypeLength { len: 0, .. } => "Type is empty.".into(),
        TypeLength { value, len } => format!(
            "Type {} is too {}: {len} letter{} (a type has {MIN_TYPE_LEN} to {MAX_TYPE_LEN} \
             letters).",
            quoted(value),
            if *len < MIN_TYPE_LEN { "short" } else { "long" },
            if *len == 1 { "" } else { "s" }
        ),
        TypeChar {
            value,
            position,
            found,
        } => format!(
            "Type {} has a character outside [a-z]: {} at position {position}.",
            quoted(value),
            shown_char(*found)
        ),
        MissingSegment { kind } => format!(
            "Type {} must be followed by at least one segment.",
            quoted(kind)
        ),
        TooManySegments { count } => {
            format!("Too many segments: {count} (at most {MAX_SEGMENTS}).")
        }
        PrefixFull => format!(
            "The prefix already has {MAX_SEGMENTS} segments, the most a key has, so a number \
             cannot be added to it."
        ),
        EmptySegment { index } => format!("Segment {index} is empty."),
        SegmentTooLong { index, value, len } => format!(
            "Segment {index} {} is too long: {len} characters (at most {MAX_SEGMENT_LEN}).",
            quoted(value)
        ),
        SegmentChar {
            index,
            value,
            position,
            found,
        } => format!(
            "Segment {index} {} has a character outside [a-z0-9]: {} at position {position}.",
            quoted(value),
            shown_char(*found)
        ),
        WrongCheckChar { expected, found } => format!(
            "Wrong check character: expected '{expected}', found {}.",
            shown_char(*found)
        ),
    }
}

fn invalid_rapkey(input: &str, error: RapkeyError) -> ! {
    invalid_text("rapkey", input, why(&error)).raise()
}

fn invalid_argument(what: &str, error: RapkeyError) -> ! {
    invalid_parameter(format!("invalid rapkey {what}"))
        .detail(why(&error))
        .raise()
}

#[pg_extern(sql = false)]
fn rapkey_is_valid(key: &[u8]) -> bool {
    rapkey::is_valid(&text(key))
}

// ---------------------------------------------------------------------------------------
// The domain's CHECK

const DOMAIN_HINT: &str = "A rapkey is type.segment[.segment...]-c: a type of 2 to 8 letters, \
                           1 to 5 segments of [a-z0-9], and a check character.";

/// `rapkey_domain_check(text)`, the domain's CHECK: true, or an error saying what is wrong (a
/// bare `false` would only say "violates check constraint"). The error is the one PostgreSQL
/// raises for a domain's CHECK, 23514 with the constraint, type and schema names
/// (`errors::domain_violation`), plus a DETAIL and HINT.
///
/// pgrx's `ErrorReport` cannot set those names, and an error caught at pgrx's guard is raised
/// again without them, so this function is not a `#[pg_extern]`: it is the V1 C function
/// itself. All Rust work (reading the argument, validating, wording, allocating) runs inside
/// `check_domain_value`, a `#[pg_guard]` function, where a panic or a PostgreSQL error is
/// turned into a PostgreSQL error as in any `#[pg_extern]`. What is left here holds no value
/// with a destructor and cannot panic: a match, and `errors::raise_prepared`, whose ERROR
/// longjmps out of this frame exactly as C's `ereport` does. Both longjmps (the guard's and
/// the report's) thus only cross frames with nothing to drop, as Rust requires of a longjmp
/// (the "plain old frames" of the C-unwind RFC), and no panic crosses into C.
///
/// # Safety
/// Called by PostgreSQL's fmgr with a valid `fcinfo` for `rapkey_domain_check(text)`.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn rapkey_domain_check_wrapper(
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: fcinfo is fmgr's; check_domain_value is guarded.
    let violation = unsafe { check_domain_value(fcinfo) };
    if violation.is_nothing() {
        return pg_sys::Datum::from(true);
    }
    // SAFETY: this frame and fmgr's hold nothing to drop.
    unsafe { errors::raise_prepared(violation) }
}

/// The V1 calling convention record PostgreSQL looks for beside a C function.
#[unsafe(no_mangle)]
pub extern "C" fn pg_finfo_rapkey_domain_check_wrapper() -> &'static pg_sys::Pg_finfo_record {
    const V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };
    &V1
}

/// The Rust half of the domain's CHECK: validates the argument and, when it is not a valid
/// key, words the violation, ready to raise (`Prepared::NOTHING` for a valid key).
#[pg_guard]
unsafe extern "C-unwind" fn check_domain_value(
    fcinfo: pg_sys::FunctionCallInfo,
) -> errors::Prepared {
    violation_of(fcinfo).map_or(errors::Prepared::NOTHING, errors::PgReport::prepare)
}

fn violation_of(fcinfo: pg_sys::FunctionCallInfo) -> Option<errors::PgReport> {
    // SAFETY: argument 0 of rapkey_domain_check(text) is a text (NULL never arrives: STRICT).
    let bytes = unsafe { text_arg(fcinfo) }?;
    // Non-UTF-8 bytes are never valid: the verdict needs no conversion.
    if rapkey::is_valid_bytes(bytes) {
        return None;
    }
    let key = text(bytes);
    let error = rapkey::validate(&key).err()?;
    // SAFETY: fcinfo is fmgr's.
    let (domain, constraint) = unsafe { domain_and_constraint(fcinfo) };
    let mut report = errors::domain_violation("rapkey", domain, constraint).detail(format!(
        "{}: {}",
        quoted(&key),
        why(&error)
    ));
    if !error.is_checksum() {
        report = report.hint(DOMAIN_HINT);
    }
    Some(report)
}

/// Argument 0, a text, as bytes. A value that is inline and uncompressed, as nearly every value
/// a domain's CHECK sees, is read where it lies: pgrx's conversion would call PostgreSQL's
/// detoaster through its error guard for each row, which costs as much as the validation.
unsafe fn text_arg<'a>(fcinfo: pg_sys::FunctionCallInfo) -> Option<&'a [u8]> {
    use pgrx::varlena::{varatt_is_1b, varatt_is_1b_e, varatt_is_4b_u, varlena_to_byte_slice};
    unsafe {
        let datum = pgrx::fcinfo::pg_getarg_datum_raw(fcinfo, 0);
        let varlena = datum.cast_mut_ptr::<pg_sys::varlena>();
        if varlena.is_null() {
            return None;
        }
        if varatt_is_4b_u(varlena) || (varatt_is_1b(varlena) && !varatt_is_1b_e(varlena)) {
            return Some(varlena_to_byte_slice(varlena));
        }
        pgrx::fcinfo::pg_getarg::<&[u8]>(fcinfo, 0)
    }
}

/// The rapkey domain (the type `rapkey` in the schema of the function being called, the
/// extension's) and the name of its CHECK constraint that calls this function, as
/// sql/rapkey.sql names it (in the type cache, which outlives the call): `InvalidOid` and
/// `None` where there is none.
unsafe fn domain_and_constraint<'a>(
    fcinfo: pg_sys::FunctionCallInfo,
) -> (pg_sys::Oid, Option<&'a CStr>) {
    unsafe {
        let flinfo = (*fcinfo).flinfo;
        if flinfo.is_null() {
            return (pg_sys::InvalidOid, None);
        }
        let function = (*flinfo).fn_oid;
        let domain = pg_sys::GetSysCacheOid(
            pg_sys::SysCacheIdentifier::TYPENAMENSP as c_int,
            pg_sys::Anum_pg_type_oid as pg_sys::AttrNumber,
            pg_sys::Datum::from(c"rapkey".as_ptr()),
            pg_sys::Datum::from(pg_sys::get_func_namespace(function)),
            pg_sys::Datum::from(0),
            pg_sys::Datum::from(0),
        );
        if domain == pg_sys::InvalidOid {
            return (domain, None);
        }
        // The type cache holds the domain's constraints (loaded to run this very check). The
        // reference lives in palloc'd memory: it registers a reset callback of the memory
        // context, which points into it.
        let reference = pg_sys::palloc0(std::mem::size_of::<pg_sys::DomainConstraintRef>())
            .cast::<pg_sys::DomainConstraintRef>();
        pg_sys::InitDomainConstraintRef(domain, reference, pg_sys::CurrentMemoryContext, false);
        let constraints =
            pgrx::PgList::<pg_sys::DomainConstraintState>::from_pg((*reference).constraints);
        for c in constraints.iter_ptr() {
            let expr = (*c).check_expr.cast::<pg_sys::Node>();
            if (*c).constrainttype == pg_sys::DomainConstraintType::DOM_CONSTRAINT_CHECK
                && !expr.is_null()
                && (*expr).type_ == pg_sys::NodeTag::T_FuncExpr
                && (*expr.cast::<pg_sys::FuncExpr>()).funcid == function
            {
                return (domain, Some(CStr::from_ptr((*c).name)));
            }
        }
        (domain, None)
    }
}

// ---------------------------------------------------------------------------------------
// Builders, accessors, prefix ranges

#[pg_extern(sql = false)]
fn rapkey_check_char(body: &[u8]) -> String {
    rapkey::check_char(&text(body))
        .unwrap_or_else(|e| invalid_argument("body", e))
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
    rapkey::build(&text(kind), &parts).unwrap_or_else(|e| invalid_argument("part", e))
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
        .unwrap_or_else(|e| invalid_argument("prefix", e))
        .0
}

#[pg_extern(sql = false)]
fn rapkey_prefix_hi(prefix: &[u8]) -> String {
    rapkey::prefix_range(&text(prefix))
        .unwrap_or_else(|e| invalid_argument("prefix", e))
        .1
}

#[pg_extern(sql = false)]
fn rapkey_normalize_prefix(prefix: &[u8]) -> String {
    rapkey::numbering_prefix(&text(prefix)).unwrap_or_else(|e| invalid_argument("prefix", e))
}
