//! Randomness from PostgreSQL's own strong source.

use crate::errors::PgReport;
use pgrx::{pg_sys, PgSqlErrorCode};

pub fn random_u32() -> u32 {
    let mut bytes = [0u8; 4];
    if !unsafe { pg_sys::pg_strong_random(bytes.as_mut_ptr().cast(), bytes.len()) } {
        PgReport::new(
            PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
            "could not generate random bytes",
        )
        .raise();
    }
    u32::from_ne_bytes(bytes)
}
