//! Return values built directly in palloc'd memory, so hot output paths copy once.

use pgrx::callconv::{BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::{impl_sql_translatable, pg_sys};

/// A NUL-terminated C string in palloc'd memory (an output function's result).
pub struct CStringDatum(pg_sys::Datum);

/// A bytea in palloc'd memory.
pub struct ByteaDatum(pg_sys::Datum);

impl CStringDatum {
    pub fn new(text: &[u8]) -> Self {
        unsafe {
            let buf = pg_sys::palloc(text.len() + 1).cast::<u8>();
            buf.copy_from_nonoverlapping(text.as_ptr(), text.len());
            buf.add(text.len()).write(0);
            CStringDatum(pg_sys::Datum::from(buf))
        }
    }
}

impl ByteaDatum {
    pub fn new(bytes: &[u8]) -> Self {
        unsafe {
            let total = bytes.len() + pg_sys::VARHDRSZ;
            let varlena = pg_sys::palloc(total).cast::<pg_sys::varlena>();
            pgrx::varlena::set_varsize_4b(varlena, total as i32);
            let data = varlena.cast::<u8>().add(pg_sys::VARHDRSZ);
            data.copy_from_nonoverlapping(bytes.as_ptr(), bytes.len());
            ByteaDatum(pg_sys::Datum::from(varlena))
        }
    }
}

unsafe impl BoxRet for CStringDatum {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        unsafe { fcinfo.return_raw_datum(self.0) }
    }
}

unsafe impl BoxRet for ByteaDatum {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        unsafe { fcinfo.return_raw_datum(self.0) }
    }
}

impl_sql_translatable!(CStringDatum, "cstring");
impl_sql_translatable!(ByteaDatum, "bytea");
