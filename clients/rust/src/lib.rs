//! The application side of pg_idgen: typed `xid12` values for the
//! `postgres` and `sqlx` drivers, and generators that make ids in the application which merge
//! with the server's without a conflict.
//!
//! - [`Xid`]: an `xid12` (rs/xid) value: text and bytes exactly as the server reads and writes
//!   them, accessors, byte order, [`Xid::new`] and [`XidGenerator`] like `gen_xid12()`.
//! - [`Snowflake`]: the server's Snowflake layout and generator for one worker id; decoders in
//!   [`snowflake`].
//! - [`rapkey`]: validator, builder, check character and prefix ranges.
//! - [`registry`] (features `postgres`, `sqlx`): Snowflake and xid12 generators whose worker /
//!   machine id is granted by the database's writer registry, for a window of id-time, so that
//!   no two writers make the same id whatever their clocks do.
//! - [`edition`]: which pg_idgen a database has, native or the portable SQL edition
//!   ([`edition::detect`], [`edition::detect_sqlx`]), and what the drivers do on each.
//! - `edge` (feature `edge`): `EdgeStore`, a registry grant kept in an edge device's own SQLite
//!   file, so that ids are made offline for days and merged into PostgreSQL later.
//!
//! The codec, layouts, check characters and generator state machines are the extension's own
//! (the `idgen-core` crate): one implementation of the format.
//!
//! Features: `serde` (an `Xid` as its text), `postgres` (`postgres-types` `ToSql`/`FromSql`, and
//! [`registry::Registry`]), `sqlx` (`Type`/`Encode`/`Decode`, arrays, and
//! [`registry::AsyncRegistry`], which needs a tokio runtime), `edge` (rusqlite with its bundled
//! SQLite, and `postgres`).

#[cfg(feature = "edge")]
pub mod edge;
pub mod edition;
mod error;
#[cfg(feature = "postgres")]
mod postgres_ext;
pub mod rapkey;
#[cfg(any(feature = "postgres", feature = "sqlx"))]
pub mod registry;
#[cfg(feature = "serde")]
mod serde_ext;
pub mod snowflake;
#[cfg(feature = "sqlx")]
mod sqlx_ext;
// Some words are the registry's or the edge store's only (features).
#[cfg_attr(
    not(all(feature = "postgres", feature = "sqlx", feature = "edge")),
    allow(dead_code)
)]
mod words;
mod xid;

pub use edition::Edition;
pub use error::{EdgeWindow, Error, RegistryCondition};
pub use snowflake::Snowflake;
pub use xid::{default_machine, machine_from_int, Xid, XidGenerator};
