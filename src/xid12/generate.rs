//! `gen_xid12()`: the backend's generator state, clock, machine id, pid and counter.

use super::parts::{raise, time_of};
use super::Xid12;
use crate::{guc, random, shmem, timestamps};
use idgen_core::xid::{Generator, LocalCounter, Xid};
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::cell::Cell;

thread_local! {
    static GENERATOR: Cell<Generator> = const { Cell::new(Generator::new()) };
    static LOCAL_COUNTER: Cell<Option<LocalCounter>> = const { Cell::new(None) };
}

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
    GENERATOR.with(|cell| {
        let mut generator = cell.get();
        let id = generator.next(
            timestamps::now_unix_seconds(),
            guc::xid_machine(),
            pid(),
            counter,
        );
        cell.set(generator);
        Xid12(id.unwrap_or_else(|e| raise(e)))
    })
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
