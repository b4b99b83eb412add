//! Snowflake ids as bigint (docs/formats.md §5): the SQL functions (`functions`), the
//! generator's state shared by the cluster (`state`), its high-water mark on disk (`mark`,
//! docs/formats.md §6) and in WAL (`wal`, §7). The layout and the state machine are `idgen_core::snowflake`.

mod functions;
mod mark;
mod state;
mod wal;

pub use state::init_shared_state;
pub use wal::register as register_wal_rmgr;
