//! State shared by every backend of the cluster. It exists only when the library is in
//! `shared_preload_libraries`: shared memory can be reserved at postmaster start and never later.

use idgen_core::snowflake::SnowflakeState;
use idgen_core::spinlock::SpinLocked;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic, PgLwLock};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

static XID_COUNTER: PgAtomic<AtomicU32> = unsafe { PgAtomic::new(c"pg_idgen xid12 counter") };

/// The snowflake generator's state as it lives in shared memory.
#[repr(transparent)]
pub struct SharedSnowflake(SpinLocked<SnowflakeState>);

// SnowflakeState is plain integers with no pointers, so its bytes mean the same in every
// process, and SpinLocked is a flag and the value.
unsafe impl PGRXSharedMemory for SharedSnowflake {}

/// The snowflake generator's state. Each id takes the spinlock for a few nanoseconds; an
/// LWLock would cost two calls into PostgreSQL per id.
static SNOWFLAKE: PgAtomic<SharedSnowflake> = unsafe { PgAtomic::new(c"pg_idgen snowflake state") };

/// Held while one backend persists the next snowflake lease (a file write and an fsync,
/// about once a second), so that the others wait for it instead of writing too. Never held
/// together with the spinlock.
pub static SNOWFLAKE_LEASE_WRITER: PgLwLock<()> =
    unsafe { PgLwLock::new(c"pg_idgen snowflake lease writer") };

/// Set in the postmaster's `_PG_init` and inherited by every backend it forks.
static PRELOADED: AtomicBool = AtomicBool::new(false);

pub fn init_if_preloading() {
    if !unsafe { pg_sys::process_shared_preload_libraries_in_progress } {
        return;
    }
    pg_shmem_init!(XID_COUNTER = AtomicU32::new(crate::random::random_u32()));
    // Evaluated in the shared memory startup hook: the state resumes from the mark on disk.
    pg_shmem_init!(
        SNOWFLAKE = SharedSnowflake(SpinLocked::new(crate::snowflake_mark::startup_state()))
    );
    pg_shmem_init!(SNOWFLAKE_LEASE_WRITER);
    PRELOADED.store(true, Ordering::Relaxed);
}

pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::Relaxed)
}

/// The next value of the cluster-wide xid12 counter, or None when not preloaded.
pub fn next_xid_counter() -> Option<u32> {
    preloaded().then(|| XID_COUNTER.get().fetch_add(1, Ordering::Relaxed))
}

/// The snowflake generator's state; only when preloaded.
pub fn snowflake() -> &'static SpinLocked<SnowflakeState> {
    &SNOWFLAKE.get().0
}
