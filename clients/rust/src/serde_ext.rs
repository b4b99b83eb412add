//! `serde` support: an `Xid` is its 20-character text (`"9m4e2mr0ui3e8a215n4g"`), in every
//! format; reading accepts what [`Xid::parse`] accepts and refuses the rest with its reason.

use crate::Xid;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

impl Serialize for Xid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

struct XidVisitor;

impl Visitor<'_> for XidVisitor {
    type Value = Xid;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an xid12 as 20 base32hex characters")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Xid, E> {
        Xid::parse(text).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Xid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Xid, D::Error> {
        deserializer.deserialize_str(XidVisitor)
    }
}
