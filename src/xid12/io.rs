//! Text and binary I/O, and the bytea casts.

use super::Xid12;
use crate::datum_out::{ByteaDatum, CStringDatum};
use crate::errors::{invalid_text, null_value, server_text, PgReport};
use idgen_core::base32hex::{DecodeError, CHARS};
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
        Err(error) => {
            let text = server_text(input.to_bytes());
            invalid_text("xid12", &text, why_not_xid12(error, &text)).raise_or_save(fcinfo);
            None
        }
    }
}

/// The DETAIL for a text that is not an xid12. The decoder counts bytes; users count
/// characters, so positions and lengths are given in characters of `text`.
fn why_not_xid12(error: DecodeError, text: &str) -> String {
    let outside_alphabet = |character: usize| {
        format!("Character {character} is outside the base32hex alphabet 0-9, a-v.")
    };
    if text.trim() != text {
        return "Leading and trailing spaces are not allowed.".to_string();
    }
    match error {
        DecodeError::Length(_) => match text.chars().count() {
            // As many characters as an xid12 has, but some of them take more than one byte.
            CHARS => outside_alphabet(text.chars().position(|c| !c.is_ascii()).unwrap_or(0) + 1),
            chars => format!(
                "An xid12 is {CHARS} base32hex characters; the text has {chars} characters."
            ),
        },
        // Every byte before the bad one is ASCII, so the byte position is a character boundary.
        DecodeError::Symbol { position } => outside_alphabet(text[..position].chars().count() + 1),
        DecodeError::NonCanonical => {
            "The last character must be 0 or g: its low 4 bits are unused and must be zero."
                .to_string()
        }
    }
}

#[pg_extern(sql = false)]
fn xid12_out(value: Xid12) -> CStringDatum {
    CStringDatum::new(&value.0.to_text())
}

fn wrong_binary_length(got: usize) -> ! {
    PgReport::new(
        PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
        "invalid binary xid12 value",
    )
    .detail(format!("An xid12 is exactly {LEN} bytes; got {got}."))
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
