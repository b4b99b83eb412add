//! `postgres-types` support: `Xid` is an `xid12` in binary form (the 12 bytes), so it reads
//! and binds with the `postgres` and `tokio-postgres` crates, and so do `Vec<Xid>`, `&[Xid]`
//! and `Option<Xid>` for `xid12[]` and NULLs. The type is recognised by its name, `xid12`, in
//! whatever schema the extension lives.

use crate::{Error, Xid};
use bytes::BytesMut;
use postgres_types::{to_sql_checked, FromSql, IsNull, ToSql, Type};
use std::error::Error as StdError;

type BoxError = Box<dyn StdError + Sync + Send>;

fn is_xid12(ty: &Type) -> bool {
    ty.name() == "xid12"
}

impl<'a> FromSql<'a> for Xid {
    #[inline]
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Xid, BoxError> {
        match <[u8; 12]>::try_from(raw) {
            Ok(bytes) => Ok(Xid::from_bytes(bytes)),
            Err(_) => Err(Box::new(Error::XidBytes { len: raw.len() })),
        }
    }

    fn accepts(ty: &Type) -> bool {
        is_xid12(ty)
    }
}

impl ToSql for Xid {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.extend_from_slice(self.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        is_xid12(ty)
    }

    to_sql_checked!();
}
