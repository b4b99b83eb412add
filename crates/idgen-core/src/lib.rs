//! Pure logic behind pg_idgen: no PostgreSQL, no pgrx.
//!
//! Each module owns one capability; the extension crate maps SQL onto these functions.

pub mod base32hex;
pub mod cardinality;
pub mod grant;
pub mod pgtime;
pub mod rapkey;
pub mod snowflake;
pub mod spinlock;
pub mod words;
pub mod xid;
