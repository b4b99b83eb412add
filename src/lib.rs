//! pg_idgen: the SQL glue. Each module maps one SQL capability onto `idgen_core`.
//!
//! The SQL objects themselves are written by hand in `sql/*.sql`; the Rust functions
//! below are declared with `sql = false` so that file is the one reviewed definition.

use pgrx::prelude::*;

mod datum_out;
mod errors;
mod guc;
mod random;
mod rapkey;
mod shmem;
mod snowflake;
mod timestamps;
mod xid12;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!("../sql/xid12.sql", name = "xid12");
extension_sql_file!("../sql/snowflake.sql", name = "snowflake");
extension_sql_file!("../sql/rapkey.sql", name = "rapkey");

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    guc::register();
    shmem::init_if_preloading();
}
