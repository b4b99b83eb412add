//! Sort support: a direct comparator, and abbreviated keys made of the first 8 bytes.
//!
//! The first 8 bytes are the time, the machine and the high byte of the pid. Ids made in
//! a burst on one machine share them, so the abbreviation is abandoned, as `uuid.c` does,
//! when too few abbreviated keys are distinct (`AbbreviationStats`).

use super::Xid12;
use idgen_core::cardinality::AbbreviationStats;
use pgrx::prelude::*;
use pgrx::{pg_sys, Internal};
use std::ffi::c_int;

#[pg_extern(sql = false)]
fn xid12_sortsupport(ssup: Internal) {
    let ssup = ssup.unwrap().expect("sort support needs its state");
    unsafe { prepare(ssup.cast_mut_ptr()) }
}

/// Fills in a sort's support functions.
///
/// # Safety
/// `ssup` must be a SortSupportData being set up by PostgreSQL for an xid12 sort.
pub(crate) unsafe fn prepare(ssup: *mut pg_sys::SortSupportData) {
    (*ssup).comparator = Some(compare_full);
    if (*ssup).abbreviate {
        let state =
            pg_sys::MemoryContextAlloc((*ssup).ssup_cxt, std::mem::size_of::<AbbreviationStats>())
                .cast::<AbbreviationStats>();
        state.write(AbbreviationStats::default());
        (*ssup).ssup_extra = state.cast();
        (*ssup).comparator = Some(compare_abbreviated);
        (*ssup).abbrev_converter = Some(abbreviate);
        (*ssup).abbrev_abort = Some(abbreviation_is_useless);
        (*ssup).abbrev_full_comparator = Some(compare_full);
    }
}

unsafe extern "C-unwind" fn compare_full(
    a: pg_sys::Datum,
    b: pg_sys::Datum,
    _: pg_sys::SortSupport,
) -> c_int {
    Xid12::from_ptr(a).cmp(&Xid12::from_ptr(b)) as c_int
}

// From PostgreSQL 15 on, tuplesort inlines comparisons when the comparator is this very
// server function, so the address must be the server's symbol, not a pgrx wrapper of it.
#[cfg(not(any(feature = "pg13", feature = "pg14")))]
extern "C-unwind" {
    #[link_name = "ssup_datum_unsigned_cmp"]
    fn compare_abbreviated(a: pg_sys::Datum, b: pg_sys::Datum, ssup: pg_sys::SortSupport) -> c_int;
}

#[cfg(any(feature = "pg13", feature = "pg14"))]
unsafe extern "C-unwind" fn compare_abbreviated(
    a: pg_sys::Datum,
    b: pg_sys::Datum,
    _: pg_sys::SortSupport,
) -> c_int {
    a.value().cmp(&b.value()) as c_int
}

unsafe extern "C-unwind" fn abbreviate(
    original: pg_sys::Datum,
    ssup: pg_sys::SortSupport,
) -> pg_sys::Datum {
    let key = Xid12::from_ptr(original).0.abbreviated();
    (*(*ssup).ssup_extra.cast::<AbbreviationStats>()).add(key);
    pg_sys::Datum::from(key as usize)
}

unsafe extern "C-unwind" fn abbreviation_is_useless(
    rows: c_int,
    ssup: pg_sys::SortSupport,
) -> bool {
    (*(*ssup).ssup_extra.cast::<AbbreviationStats>()).should_abort(rows.into())
}
