//! Text and binary I/O, and the bytea casts.

use super::Xid12;
use crate::datum_out::{ByteaDatum, CStringDatum};
use crate::errors::{invalid_text, null_value, server_text, worded};
use idgen_core::xid::{BytesLengthError, Xid, LEN};
use pgrx::prelude::*;
use pgrx::{pg_sys, Internal, PgSqlErrorCode};
use std::ffi::CStr;

/// Bad input is a soft error where the caller asked for one (`pg_input_is_valid`, COPY's
/// `ON_ERROR`): then the result is NULL, which PostgreSQL ignores.
#[pg_extern(sql = false)]
fn xid12_in(input: &CStr, fcinfo: pg_sys::FunctionCallInfo) -> Option<Xid12> {
    match Xid::parse(input.to_bytes()) {
        Ok(xid) => Some(Xid12(xid)),
        Err(error) => {
            let words = error.words(&server_text(input.to_bytes()));
            invalid_text(words).raise_or_save(fcinfo);
            None
        }
    }
}

#[pg_extern(sql = false)]
fn xid12_out(value: Xid12) -> CStringDatum {
    CStringDatum::new(&value.0.to_text())
}

fn wrong_binary_length(error: BytesLengthError) -> ! {
    worded(
        PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
        error.words(),
    )
    .raise()
}

#[pg_extern(sql = false)]
fn xid12_recv(buf: Internal) -> Xid12 {
    // STRICT in SQL, and no SQL expression makes a value of type internal (only the binary
    // input of a value passes one), so a buffer is always there; an error all the same.
    let Some(buf) = buf.unwrap() else {
        null_value("xid12_recv needs a message buffer").raise()
    };
    unsafe {
        let buf = buf.cast_mut_ptr::<pg_sys::StringInfoData>();
        let remaining = ((*buf).len - (*buf).cursor) as usize;
        if remaining != LEN {
            wrong_binary_length(BytesLengthError { len: remaining });
        }
        let start = (*buf).data.add((*buf).cursor as usize).cast::<[u8; LEN]>();
        (*buf).cursor += LEN as i32;
        Xid12(Xid(start.read()))
    }
}

/// Also the cast to bytea (`xid12_to_bytea` in SQL): both are the 12 bytes.
#[pg_extern(sql = false)]
fn xid12_send(value: Xid12) -> ByteaDatum {
    ByteaDatum::new(value.as_bytes())
}

#[pg_extern(sql = false)]
fn bytea_to_xid12(bytes: &[u8]) -> Xid12 {
    Xid::from_slice(bytes)
        .map(Xid12)
        .unwrap_or_else(|e| wrong_binary_length(e))
}
