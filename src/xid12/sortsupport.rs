//! Sort support: a direct comparator, and 8-byte abbreviated keys (`Xid::abbreviated`)
//! relative to the first id the sort converts. As `uuid.c` does, the abbreviation is
//! abandoned when too few keys are distinct (`AbbreviationStats`).

use super::Xid12;
use crate::errors::null_value;
use idgen_core::cardinality::AbbreviationStats;
use idgen_core::xid::Xid;
use pgrx::prelude::*;
use pgrx::{pg_sys, Internal};
use std::ffi::c_int;

#[pg_extern(sql = false)]
fn xid12_sortsupport(ssup: Internal) {
    // STRICT in SQL, and no SQL expression makes a value of type internal (only a sort being
    // set up passes one), so the state is always there; an error all the same.
    let Some(ssup) = ssup.unwrap() else {
        null_value("xid12_sortsupport needs the sort's SortSupport state").raise()
    };
    unsafe { prepare(ssup.cast_mut_ptr()) }
}

/// What one sort's abbreviation keeps, in the sort's memory context. Plain data: nothing to
/// drop, 8-byte alignment at most (what palloc gives).
///
/// Keys made against one base never meet keys of another: an abbreviated key lives only in
/// the in-memory tuple array of the one sort whose SortSupport made it. Runs written to tape
/// do not keep it (tuplesort switches to the full comparator before merging, which is also
/// how a parallel sort's leader merges its workers' runs, each made with its own base);
/// Gather Merge, MergeAppend and the btree build's final pass set up their own SortSupport
/// without abbreviation. A sort that is reset and refilled (incremental sort) keeps its base,
/// so all keys of one batch share it.
struct Abbreviation {
    base: Option<Xid>,
    stats: AbbreviationStats,
}

const _: () = assert!(std::mem::align_of::<Abbreviation>() <= 8);
const _: () = assert!(!std::mem::needs_drop::<Abbreviation>());
// The key is 64 bits wide; pgrx targets only 64-bit platforms.
const _: () = assert!(std::mem::size_of::<pg_sys::Datum>() == 8);

/// Fills in a sort's support functions.
///
/// # Safety
/// `ssup` must be a SortSupportData being set up by PostgreSQL for an xid12 sort.
pub(crate) unsafe fn prepare(ssup: *mut pg_sys::SortSupportData) {
    (*ssup).comparator = Some(compare_full);
    if (*ssup).abbreviate {
        let state =
            pg_sys::MemoryContextAlloc((*ssup).ssup_cxt, std::mem::size_of::<Abbreviation>())
                .cast::<Abbreviation>();
        state.write(Abbreviation {
            base: None,
            stats: AbbreviationStats::default(),
        });
        (*ssup).ssup_extra = state.cast();
        (*ssup).comparator = Some(compare_abbreviated);
        (*ssup).abbrev_converter = Some(abbreviate);
        (*ssup).abbrev_abort = Some(abbreviation_is_useless);
        (*ssup).abbrev_full_comparator = Some(compare_full);
    }
}

// The callbacks run inside tuplesort's C loops, so none may unwind into them. The comparators
// cannot panic: each is one comparison of two fixed-size values, with no indexing, arithmetic
// or allocation, and they stay unguarded because they run O(n log n) times. The once-per-row
// callbacks are guarded, which turns any panic into a PostgreSQL error.
unsafe extern "C-unwind" fn compare_full(
    a: pg_sys::Datum,
    b: pg_sys::Datum,
    _: pg_sys::SortSupport,
) -> c_int {
    Xid12::from_ptr(a).cmp(&Xid12::from_ptr(b)) as c_int
}

// From PostgreSQL 15 on, tuplesort inlines comparisons when the comparator is this very
// server function, so the address must be the server's symbol, not a pgrx wrapper of it.
#[cfg(not(feature = "pg14"))]
extern "C-unwind" {
    #[link_name = "ssup_datum_unsigned_cmp"]
    fn compare_abbreviated(a: pg_sys::Datum, b: pg_sys::Datum, ssup: pg_sys::SortSupport) -> c_int;
}

#[cfg(feature = "pg14")]
unsafe extern "C-unwind" fn compare_abbreviated(
    a: pg_sys::Datum,
    b: pg_sys::Datum,
    _: pg_sys::SortSupport,
) -> c_int {
    a.value().cmp(&b.value()) as c_int
}

#[pg_guard]
unsafe extern "C-unwind" fn abbreviate(
    original: pg_sys::Datum,
    ssup: pg_sys::SortSupport,
) -> pg_sys::Datum {
    let state = &mut *(*ssup).ssup_extra.cast::<Abbreviation>();
    let id = Xid12::from_ptr(original).0;
    // Every key of this sort is relative to the same base: the first id converted.
    let key = id.abbreviated(state.base.get_or_insert(id));
    state.stats.add(key);
    pg_sys::Datum::from(key as usize)
}

#[pg_guard]
unsafe extern "C-unwind" fn abbreviation_is_useless(
    rows: c_int,
    ssup: pg_sys::SortSupport,
) -> bool {
    (*(*ssup).ssup_extra.cast::<Abbreviation>())
        .stats
        .should_abort(rows.into())
}
