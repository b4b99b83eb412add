//! The preloaded library's shared memory: whether it exists, and the cluster-wide xid12
//! counter. It exists only when the library is in `shared_preload_libraries`: shared memory
//! can be reserved at postmaster start and never later. Other capabilities keep their own
//! shared state (`crate::snowflake`), set up by `_PG_init` when this says it is preloading.

use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PgAtomic};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

static XID_COUNTER: PgAtomic<AtomicU32> = unsafe { PgAtomic::new(c"pg_idgen xid12 counter") };

/// Set in the postmaster's `_PG_init` and inherited by every backend it forks.
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// In `_PG_init`: when the library is being preloaded, reserves the xid12 counter and returns
/// true (the caller then reserves the other shared state); otherwise false.
pub fn init_if_preloading() -> bool {
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return false;
    }
    pg_shmem_init!(XID_COUNTER = AtomicU32::new(crate::random::random_u32()));
    PRELOADED.store(true, Ordering::Relaxed);
    true
}

pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

/// The next value of the cluster-wide xid12 counter, or None when not preloaded.
pub fn next_xid_counter() -> Option<u32> {
    preloaded().then(|| XID_COUNTER.get().fetch_add(1, Ordering::Relaxed))
}
