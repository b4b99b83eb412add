//! `postgres-types` support: `Xid` is an `xid12` in binary form (the 12 bytes), so it reads
//! and binds with the `postgres` and `tokio-postgres` crates, and so do `Vec<Xid>`, `&[Xid]`
//! and `Option<Xid>` for `xid12[]` and NULLs. The type is recognised by its name, `xid12`, in
//! whatever schema the extension lives.
//!
//! The portable edition (`xid12` a domain over `text`): an `Xid` also reads from a `text` value
//! (the server describes a portable `xid12` column as `text`: its 20-character text is parsed)
//! and binds to a parameter typed `text` or as the portable `xid12` domain, as its text.

use crate::{Error, Xid};
use bytes::BytesMut;
use postgres_types::{to_sql_checked, FromSql, IsNull, Kind, ToSql, Type};
use std::error::Error as StdError;

type BoxError = Box<dyn StdError + Sync + Send>;

/// The native type: a base type named xid12 (12 bytes in binary form).
fn is_xid12(ty: &Type) -> bool {
    ty.name() == "xid12" && !matches!(ty.kind(), Kind::Domain(_))
}

/// Text on the wire: `text`, or the portable edition's domain `xid12` over text.
fn is_text(ty: &Type) -> bool {
    *ty == Type::TEXT
        || (ty.name() == "xid12" && matches!(ty.kind(), Kind::Domain(base) if *base == Type::TEXT))
}

impl<'a> FromSql<'a> for Xid {
    #[inline]
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Xid, BoxError> {
        if is_text(ty) {
            return Ok(Xid::parse(std::str::from_utf8(raw)?)?);
        }
        match <[u8; 12]>::try_from(raw) {
            Ok(bytes) => Ok(Xid::from_bytes(bytes)),
            Err(_) => Err(Box::new(Error::XidBytes { len: raw.len() })),
        }
    }

    fn accepts(ty: &Type) -> bool {
        is_xid12(ty) || is_text(ty)
    }
}

impl ToSql for Xid {
    fn to_sql(&self, ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        if is_text(ty) {
            out.extend_from_slice(self.to_string().as_bytes());
        } else {
            out.extend_from_slice(self.as_bytes());
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        is_xid12(ty) || is_text(ty)
    }

    to_sql_checked!();
}
