//! `gen_xid12()`: the backend's generator state, clock, machine id, pid and counter.

use super::parts::{raise, time_of};
use super::Xid12;
use crate::{guc, random, shmem, timestamps};
use idgen_core::xid::{Generator, LocalCounter, Xid};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::Cell;

thread_local! {
    static LOCAL_COUNTER: Cell<Option<LocalCounter>> = const { Cell::new(None) };
}

/// The backend's generator. A backend runs SQL functions on one thread only, so a plain
/// static serves: a thread-local would cost a `__tls_get_addr` call per id in a loaded library.
struct BackendGenerator(Cell<Generator>);
// SAFETY: only gen_xid12() touches it, and PostgreSQL calls SQL functions on the backend's
// one thread.
unsafe impl Sync for BackendGenerator {}
static GENERATOR: BackendGenerator = BackendGenerator(Cell::new(Generator::new()));

/// The cluster-wide counter when preloaded, else this backend's own, started at random.
fn next_counter() -> u32 {
    if let Some(value) = shmem::next_xid_counter() {
        return value;
    }
    LOCAL_COUNTER.with(|cell| {
        let mut counter = cell
            .get()
            .unwrap_or_else(|| LocalCounter::starting_at(random::random_u32()));
        let value = counter.take();
        cell.set(Some(counter));
        value
    })
}

fn pid() -> u16 {
    unsafe { pg_sys::MyProcPid as u16 }
}

#[pg_extern(sql = false)]
fn gen_xid12() -> Xid12 {
    let counter = next_counter();
    let cell = &GENERATOR.0;
    let mut generator = cell.get();
    let id = generator.next(
        timestamps::now_unix_seconds(),
        guc::xid_machine(),
        pid(),
        counter,
    );
    cell.set(generator);
    Xid12(id.unwrap_or_else(|e| raise(e)))
}

#[pg_extern(sql = false)]
fn gen_xid12_at(ts: TimestampWithTimeZone) -> Xid12 {
    let time = time_of(ts);
    Xid12(
        Xid::from_parts(
            time,
            guc::xid_machine(),
            pid(),
            next_counter() & idgen_core::xid::MAX_COUNTER,
        )
        .unwrap_or_else(|e| raise(e)),
    )
}

#[pg_extern(sql = false)]
fn xid12_current_machine() -> crate::datum_out::ByteaDatum {
    crate::datum_out::ByteaDatum::new(&guc::xid_machine())
}
