//! The Snowflake generator's state, shared by every backend of the cluster: it lives in the
//! preloaded library's shared memory, resumes from the mark file when the postmaster sets it
//! up, rises to every lease replayed from WAL (`super::wal`, PostgreSQL 15 and later), and is
//! written back to the file when the postmaster exits.

use super::mark;
use idgen_core::snowflake::{Mark, MarkKind, SnowflakeState};
use idgen_core::spinlock::SpinLocked;
use pgrx::prelude::*;
use pgrx::{pg_shmem_init, PGRXSharedMemory, PgAtomic, PgLwLock};

/// The state as it lives in shared memory.
#[repr(transparent)]
pub struct SharedSnowflake(SpinLocked<SnowflakeState>);

// SnowflakeState is plain integers with no pointers, so its bytes mean the same in every
// process, and SpinLocked is a flag and the value.
unsafe impl PGRXSharedMemory for SharedSnowflake {}

/// Each id takes the spinlock for a few nanoseconds; an LWLock would cost two calls into
/// PostgreSQL per id.
static SNOWFLAKE: PgAtomic<SharedSnowflake> = unsafe { PgAtomic::new(c"pg_idgen snowflake state") };

/// Held while one backend persists the next lease (a file write and an fsync, about once a
/// second), so that the others wait for it instead of writing too. Never held together with
/// the spinlock.
pub static LEASE_WRITER: PgLwLock<()> =
    unsafe { PgLwLock::new(c"pg_idgen snowflake lease writer") };

/// Reserves the state in shared memory; called from `_PG_init` while the library is being
/// preloaded (`crate::shmem::init_if_preloading` said so).
pub fn init_shared_state() {
    // Evaluated in the shared memory startup hook: the state resumes from the mark on disk.
    pg_shmem_init!(SNOWFLAKE = SharedSnowflake(SpinLocked::new(startup_state())));
    pg_shmem_init!(LEASE_WRITER);
}

/// The generator's state; only when preloaded (`crate::shmem::preloaded`).
pub fn shared() -> &'static SpinLocked<SnowflakeState> {
    &SNOWFLAKE.get().0
}

/// In the startup process, replaying a lease from WAL (a standby following its primary, or
/// crash recovery): raises the state to it and, when that raised it, writes it to the mark file
/// so that a restart that does not replay it again (from a later checkpoint) still starts
/// above it. Older leases (crash recovery replays those after the checkpoint, which the file
/// has already passed) change nothing.
#[cfg_attr(feature = "pg14", allow(dead_code))]
pub fn raise_to_replayed(lease: Mark) {
    let _writer = LEASE_WRITER.exclusive();
    let raised = shared().lock().raise_to(lease);
    if raised {
        mark::write_replayed(&Mark {
            kind: MarkKind::Lease,
            ..lease
        });
    }
}

/// The generator's first state, evaluated in the shared memory startup hook: resumed from the
/// file in the postmaster (at startup and after a crash reinitialized shared memory), where it
/// also arranges for the mark to be written at exit.
fn startup_state() -> SnowflakeState {
    if unsafe { pg_sys::IsUnderPostmaster } {
        // A child attaching to existing shared memory (EXEC_BACKEND builds): the value is
        // not used, the postmaster's is.
        return SnowflakeState::new();
    }
    unsafe { pg_sys::on_shmem_exit(Some(write_at_exit), pg_sys::Datum::from(0)) };
    SnowflakeState::resume(mark::read_at_startup())
}

/// The postmaster's shared memory exit callback. With code 0 (a smart, fast or immediate
/// shutdown) every other server process has exited, so the state is final: write it as the
/// exact mark. With another code (shared memory reinitialized after a crash) write nothing and
/// let the last lease stand, as pg_stat_statements does not dump its file after a crash.
#[pg_guard]
unsafe extern "C-unwind" fn write_at_exit(code: std::ffi::c_int, _arg: pg_sys::Datum) {
    if code != 0 {
        return;
    }
    // A process killed by an immediate shutdown may have died holding the lock. The
    // postmaster only tries it once: a lock left held means the lease stays, which is safe.
    let Some(state) = shared().try_lock() else {
        mark::lock_held_at_exit();
        return;
    };
    let last = state.shutdown_mark();
    drop(state);
    if let Some(last) = last {
        mark::write_at_shutdown(&last);
    }
}
