//! `sqlx` support (PostgreSQL): `Xid` is an `xid12`, `Vec<Xid>` and `&[Xid]` an `xid12[]`.
//! Binary values are the 12 bytes; text values (`raw_sql`, the simple protocol) are parsed.
//!
//! Binding needs the type's OID, which sqlx looks up by the name `xid12`, so the extension's
//! schema must be on the connection's `search_path`. Reading accepts `xid12` in any schema.
//!
//! The portable edition (`xid12` a domain over `text`): an `Xid` reads from `text` (the server
//! describes a portable `xid12` column as `text`: its 20-character text is parsed, in binary
//! and text results). A bound `Xid` is typed `xid12` by sqlx, in binary form: on the portable
//! edition bind `xid.to_string()` instead (see [`crate::edition`]).

use crate::Xid;
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::{
    PgArgumentBuffer, PgHasArrayType, PgTypeInfo, PgTypeKind, PgValueFormat, PgValueRef,
};
use sqlx::{Decode, Encode, Postgres, Type, TypeInfo, ValueRef};

/// `xid12`, or `schema.xid12` as sqlx names a type outside the `search_path`.
fn is_xid12(ty: &PgTypeInfo) -> bool {
    let name = ty.name();
    name == "xid12" || name.ends_with(".xid12")
}

impl Type<Postgres> for Xid {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_name("xid12")
    }

    fn compatible(ty: &PgTypeInfo) -> bool {
        is_xid12(ty) || is_text(ty)
    }
}

/// `text`: the portable edition's `xid12` columns, as the server describes them.
fn is_text(ty: &PgTypeInfo) -> bool {
    ty.name() == "TEXT"
}

impl PgHasArrayType for Xid {
    fn array_type_info() -> PgTypeInfo {
        PgTypeInfo::array_of("xid12")
    }

    fn array_compatible(ty: &PgTypeInfo) -> bool {
        matches!(ty.kind(), PgTypeKind::Array(element) if is_xid12(element))
    }
}

impl Encode<'_, Postgres> for Xid {
    fn encode_by_ref(&self, buf: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        buf.extend_from_slice(self.as_bytes());
        Ok(IsNull::No)
    }

    fn size_hint(&self) -> usize {
        12
    }
}

impl<'r> Decode<'r, Postgres> for Xid {
    fn decode(value: PgValueRef<'r>) -> Result<Xid, BoxDynError> {
        let text = is_text(&value.type_info());
        Ok(match value.format() {
            PgValueFormat::Binary if text => Xid::parse(value.as_str()?)?,
            PgValueFormat::Binary => Xid::try_from(value.as_bytes()?)?,
            PgValueFormat::Text => Xid::parse(value.as_str()?)?,
        })
    }
}
