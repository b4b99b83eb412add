//! State shared by every backend of the cluster. It exists only when the library is in
//! `shared_preload_libraries`: shared memory can be reserved at postmaster start and never later.

use idgen_core::snowflake::SnowflakeState;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic, PgLwLock};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

static XID_COUNTER: PgAtomic<AtomicU32> = unsafe { PgAtomic::new(c"pg_idgen xid12 counter") };

#[derive(Clone, Copy, Default)]
#[repr(transparent)]
pub struct SharedSnowflake(pub SnowflakeState);

// SnowflakeState is a plain struct of integers, with no pointers.
unsafe impl PGRXSharedMemory for SharedSnowflake {}

pub static SNOWFLAKE: PgLwLock<SharedSnowflake> = unsafe { PgLwLock::new(c"pg_idgen snowflake") };

/// Set in the postmaster's `_PG_init` and inherited by every backend it forks.
static PRELOADED: AtomicBool = AtomicBool::new(false);

pub fn init_if_preloading() {
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    pg_shmem_init!(XID_COUNTER = AtomicU32::new(crate::random::random_u32()));
    // Evaluated in the shared memory startup hook: the state resumes from the mark on disk.
    pg_shmem_init!(SNOWFLAKE = SharedSnowflake(crate::snowflake_mark::startup_state()));
    PRELOADED.store(true, Ordering::Relaxed);
}

pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

/// The next value of the cluster-wide xid12 counter, or None when not preloaded.
pub fn next_xid_counter() -> Option<u32> {
    preloaded().then(|| XID_COUNTER.get().fetch_add(1, Ordering::Relaxed))
}
