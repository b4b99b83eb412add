//! The `xid12` SQL type: a fixed-length 12-byte value passed by reference.

mod generate;
mod io;
mod ops;
mod parts;
pub(crate) mod sortsupport;

use crate::errors::null_value;
use idgen_core::xid::{Xid, LEN};
use pgrx::callconv::{Arg, ArgAbi, BoxRet, FcInfo};
use pgrx::datum::Datum;
use pgrx::nullable::Nullable;
use pgrx::pg_sys;
use pgrx::{impl_sql_translatable, FromDatum};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[repr(transparent)]
pub struct Xid12(pub Xid);

impl Xid12 {
    /// Reads the 12 bytes a by-reference datum points to.
    ///
    /// # Safety
    /// `datum` must point to an xid12 value.
    #[inline]
    pub unsafe fn from_ptr(datum: pg_sys::Datum) -> Xid12 {
        Xid12(Xid(datum.cast_mut_ptr::<[u8; LEN]>().read()))
    }

    /// The 12 bytes, as the datum holds them (and `xid12_send` sends them).
    #[inline]
    pub fn as_bytes(&self) -> &[u8; LEN] {
        &self.0 .0
    }

    /// Copies the value into memory of the current memory context.
    #[inline]
    pub fn to_datum(self) -> pg_sys::Datum {
        unsafe {
            let ptr = crate::datum_out::alloc(LEN).cast::<[u8; LEN]>();
            ptr.write(*self.as_bytes());
            pg_sys::Datum::from(ptr)
        }
    }
}

impl FromDatum for Xid12 {
    #[inline]
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _typoid: pg_sys::Oid,
    ) -> Option<Self> {
        (!is_null).then(|| Xid12::from_ptr(datum))
    }
}

unsafe impl<'fcx> ArgAbi<'fcx> for Xid12 {
    unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
        let index = arg.index();
        // pgrx unboxes a non-Option argument with this; every function taking an xid12 is
        // STRICT in sql/*.sql, so NULL never arrives. If one were not, NULL is an error.
        arg.unbox_arg_using_from_datum().unwrap_or_else(|| {
            null_value(format!("argument {} of type xid12 is NULL", index + 1)).raise()
        })
    }

    unsafe fn unbox_nullable_arg(arg: Arg<'_, 'fcx>) -> Nullable<Self> {
        arg.unbox_arg_using_from_datum().into()
    }
}

unsafe impl BoxRet for Xid12 {
    unsafe fn box_into<'fcx>(self, fcinfo: &mut FcInfo<'fcx>) -> Datum<'fcx> {
        fcinfo.return_raw_datum(self.to_datum())
    }
}

impl_sql_translatable!(Xid12, "xid12");
