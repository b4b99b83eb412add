//! Comparison and hashing: the support functions behind the btree and hash operator classes.

use super::Xid12;
use idgen_core::xid::LEN;
use pgrx::prelude::*;
use std::ffi::c_int;

#[pg_extern(sql = false)]
fn xid12_eq(a: Xid12, b: Xid12) -> bool {
    a == b
}

#[pg_extern(sql = false)]
fn xid12_ne(a: Xid12, b: Xid12) -> bool {
    a != b
}

#[pg_extern(sql = false)]
fn xid12_lt(a: Xid12, b: Xid12) -> bool {
    a < b
}

#[pg_extern(sql = false)]
fn xid12_le(a: Xid12, b: Xid12) -> bool {
    a <= b
}

#[pg_extern(sql = false)]
fn xid12_gt(a: Xid12, b: Xid12) -> bool {
    a > b
}

#[pg_extern(sql = false)]
fn xid12_ge(a: Xid12, b: Xid12) -> bool {
    a >= b
}

#[pg_extern(sql = false)]
fn xid12_cmp(a: Xid12, b: Xid12) -> i32 {
    a.cmp(&b) as i32
}

#[pg_extern(sql = false)]
fn xid12_smaller(a: Xid12, b: Xid12) -> Xid12 {
    a.min(b)
}

#[pg_extern(sql = false)]
fn xid12_larger(a: Xid12, b: Xid12) -> Xid12 {
    a.max(b)
}

// The server's hash functions (common/hashfn.h), which pgrx's bindings leave out. Using
// them keeps the low 32 bits of the seed-0 extended hash equal to the standard hash.
extern "C" {
    fn hash_bytes(k: *const u8, keylen: c_int) -> u32;
    fn hash_bytes_extended(k: *const u8, keylen: c_int, seed: u64) -> u64;
}

/// The hash PostgreSQL's `uuid_hash` computes, over the 12 bytes.
#[pg_extern(sql = false)]
fn xid12_hash(value: Xid12) -> i32 {
    unsafe { hash_bytes(value.as_bytes().as_ptr(), LEN as c_int) as i32 }
}

#[pg_extern(sql = false)]
fn xid12_hash_extended(value: Xid12, seed: i64) -> i64 {
    unsafe { hash_bytes_extended(value.as_bytes().as_ptr(), LEN as c_int, seed as u64) as i64 }
}
