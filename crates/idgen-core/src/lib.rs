//! Pure logic behind pg_idgen: no PostgreSQL, no pgrx.
//!
//! Each module owns one capability. The extension crate maps SQL onto them, and the Rust client
//! (clients/rust) builds on them too; `grant` (the generators bound to a writer registry grant)
//! and `registry` (the registry's refusals by SQLSTATE) are the clients' alone: the server
//! does not use them.

pub mod base32hex;
pub mod cardinality;
pub mod grant;
pub mod pgtime;
pub mod rapkey;
pub mod registry;
pub mod snowflake;
pub mod spinlock;
pub mod words;
pub mod xid;
