//! pg_idgen: the SQL glue. Each module maps one SQL capability onto `idgen_core`.
//!
//! The SQL objects themselves are written by hand in `sql/*.sql`; the Rust functions
//! below are declared with `sql = false` so that file is the one reviewed definition.
//!
//! **Symbol names are an on-disk interface.** Every database that ran an install or upgrade
//! script stores, for each C function, the library symbol it named (`pg_proc.prosrc`): pgrx's
//! `<rust function name>_wrapper`. Renaming a `#[pg_extern]` function renames its symbol, and
//! every existing install then fails when it calls the function. So a Rust function that a
//! released script names keeps its name (its signature in SQL stays as released, too); a
//! change goes into a new function plus an upgrade script `sql/upgrade/pg_idgen--A--B.sql`. The upgrade
//! test creates every released version from its frozen script against the current library,
//! which fails on a missing symbol.

use pgrx::prelude::*;

mod backfill;
mod datum_out;
mod errors;
mod guc;
mod random;
mod rapkey;
mod shmem;
mod snowflake;
mod timestamps;
mod xid12;

#[cfg(any(test, feature = "pg_test"))]
mod in_database_tests;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!("../sql/xid12.sql", name = "xid12");
extension_sql_file!("../sql/snowflake.sql", name = "snowflake");
extension_sql_file!("../sql/rapkey.sql", name = "rapkey");
extension_sql_file!("../sql/backfill.sql", name = "backfill");
extension_sql_file!(
    "../sql/registry.sql",
    name = "registry",
    requires = ["xid12", "snowflake"]
);

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    guc::register();
    if shmem::init_if_preloading() {
        snowflake::init_shared_state();
        // PostgreSQL 15+: the Snowflake lease's WAL record, replayed by standbys and recovery.
        snowflake::register_wal_rmgr();
    }
}

/// Required by `cargo pgrx test`: the in-database tests run with the library preloaded.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec!["shared_preload_libraries = 'pg_idgen'"]
    }
}
