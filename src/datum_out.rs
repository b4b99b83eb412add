//! Return values built directly in palloc'd memory, so hot output paths copy once.

use pgrx::callconv::{BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::{impl_sql_translatable, pg_sys};

/// PostgreSQL's allocator, called without pgrx's error guard (a sigsetjmp, a thread check
/// and a trampoline per call, which cost gen_xid12() as much as its own work). That is sound
/// only because this call cannot raise an error: MCXT_ALLOC_NO_OOM makes an allocation that
/// fails return NULL, and a size below `UNGUARDED_MAX` is always a valid request.
mod unguarded {
    unsafe extern "C-unwind" {
        pub fn palloc_extended(size: usize, flags: core::ffi::c_int) -> *mut core::ffi::c_void;
    }
}

/// Far below PostgreSQL's `MaxAllocSize` (1 GB - 1); larger requests take the guarded path.
const UNGUARDED_MAX: usize = 1 << 20;

/// `size` bytes in the current memory context. Out of memory, or a size PostgreSQL refuses,
/// raises PostgreSQL's error through the guarded allocator.
#[inline]
pub(crate) fn alloc(size: usize) -> *mut core::ffi::c_void {
    if size < UNGUARDED_MAX {
        let flags = pg_sys::MCXT_ALLOC_NO_OOM as core::ffi::c_int;
        let ptr = unsafe { unguarded::palloc_extended(size, flags) };
        if !ptr.is_null() {
            return ptr;
        }
    }
    unsafe { pg_sys::palloc(size) }
}

/// A NUL-terminated C string in palloc'd memory (an output function's result).
pub struct CStringDatum(pg_sys::Datum);

/// A bytea in palloc'd memory.
pub struct ByteaDatum(pg_sys::Datum);

impl CStringDatum {
    pub fn new(text: &[u8]) -> Self {
        unsafe {
            let buf = alloc(text.len() + 1).cast::<u8>();
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
            let varlena = alloc(total).cast::<pg_sys::varlena>();
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
