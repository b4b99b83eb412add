//! Text and binary I/O, and the bytea casts.

use super::Xid12;
use crate::datum_out::{ByteaDatum, CStringDatum};
use crate::errors::{invalid_text, server_text, PgError};
use idgen_core::xid::{Xid, LEN};
use pgrx::prelude::*;
use pgrx::{pg_sys, Internal, PgSqlErrorCode};
use std::ffi::CStr;

/// Bad input is a soft error where the caller asked for one (`pg_input_is_valid`, COPY's
/// `ON_ERROR`): then the result is NULL, which PostgreSQL ignores.
#[pg_extern(sql = false)]
fn xid12_in(input: &CStr, fcinfo: pg_sys::FunctionCallInfo) -> Option<Xid12> {
    match Xid::parse(input.to_bytes()) {
        Ok(xid) => Some(Xid12(xid)),
        Err(why) => {
            invalid_text("xid12", &server_text(input.to_bytes()), why.to_string())
                .raise_or_save(fcinfo);
            None
        }
    }
}

#[pg_extern(sql = false)]
fn xid12_out(value: Xid12) -> CStringDatum {
    CStringDatum::new(&value.0.to_text())
}

fn wrong_binary_length(got: usize) -> ! {
    PgError::new(
        PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
        "invalid binary xid12 value",
    )
    .detail(format!("An xid12 is exactly {LEN} bytes; got {got}."))
    .raise()
}

#[pg_extern(sql = false)]
fn xid12_recv(buf: Internal) -> Xid12 {
    let buf = buf.unwrap().expect("xid12_recv called without a buffer");
    unsafe {
        let buf = buf.cast_mut_ptr::<pg_sys::StringInfoData>();
        let remaining = ((*buf).len - (*buf).cursor) as usize;
        if remaining != LEN {
            wrong_binary_length(remaining);
        }
        let start = (*buf).data.add((*buf).cursor as usize).cast::<[u8; LEN]>();
        (*buf).cursor += LEN as i32;
        Xid12(Xid(start.read()))
    }
}

/// Also the cast to bytea (`xid12_to_bytea` in SQL): both are the 12 bytes.
#[pg_extern(sql = false)]
fn xid12_send(value: Xid12) -> ByteaDatum {
    ByteaDatum::new(&value.0 .0)
}

#[pg_extern(sql = false)]
fn bytea_to_xid12(bytes: &[u8]) -> Xid12 {
    match <[u8; LEN]>::try_from(bytes) {
        Ok(raw) => Xid12(Xid(raw)),
        Err(_) => wrong_binary_length(bytes.len()),
    }
}
