//! `rapkey_domain_check(text)`, the CHECK of the `rapkey` domain: a C function of its own
//! that raises PostgreSQL's domain-violation error with the constraint, type and schema names.

use crate::errors::{self, quoted, server_text as text};
use idgen_core::rapkey;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::{c_int, CStr};

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
        error.detail()
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
