//! Glue for `idgen_backfill` (sql/backfill.sql), which is PL/pgSQL: the one thing it cannot do
//! itself is time a single batch.
//!
//! PostgreSQL arms `statement_timeout` once, when the client's statement (the `CALL`) starts; a
//! `SET` inside the procedure does not re-arm it. So the procedure arms the same timer here
//! before each batch and disarms it after, and a batch that runs too long is cancelled with
//! PostgreSQL's own "canceling statement due to statement timeout" (57014).

use crate::errors::PgReport;
use pgrx::prelude::*;
use pgrx::PgSqlErrorCode;
use std::ffi::c_int;

/// `STATEMENT_TIMEOUT` in `utils/timeout.h`'s `TimeoutId`, the same on PostgreSQL 14 to 18.
/// pgrx's bindings leave that header out.
const STATEMENT_TIMEOUT: c_int = 3;

unsafe extern "C-unwind" {
    fn enable_timeout_after(id: c_int, delay_ms: c_int);
    fn disable_timeout(id: c_int, keep_indicator: bool);
}

#[pg_extern(sql = false)]
fn idgen_statement_timeout(milliseconds: i32) {
    if milliseconds < 0 {
        PgReport::new(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("statement timeout must not be negative: {milliseconds} ms"),
        )
        .raise();
    }
    // Guarded like every call into PostgreSQL: an error it raises becomes a Rust unwind here.
    unsafe {
        pg_sys::ffi::pg_guard_ffi_boundary(|| {
            if milliseconds == 0 {
                disable_timeout(STATEMENT_TIMEOUT, false);
            } else {
                enable_timeout_after(STATEMENT_TIMEOUT, milliseconds);
            }
        })
    }
}
