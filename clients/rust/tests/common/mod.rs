//! The test cluster that scripts/test.sh starts, for the test files that need a server:
//! PG_IDGEN_HOST (its socket directory) and PG_IDGEN_PORT. Those tests are `#[ignore]`d, so a
//! run without a server reports them ignored; scripts/test.sh runs them with `--include-ignored`
//! against its cluster, and one run so without the variables fails: it never passes untested.
#![allow(dead_code)] // each test file uses its part

/// The cluster's socket directory and port; a panic (the test fails) when they are not set.
pub fn server() -> (String, u16) {
    match (
        std::env::var("PG_IDGEN_HOST"),
        std::env::var("PG_IDGEN_PORT"),
    ) {
        (Ok(host), Ok(port)) => (host, port.parse().expect("PG_IDGEN_PORT is a port")),
        _ => panic!(
            "PG_IDGEN_HOST and PG_IDGEN_PORT are not set: this test needs the cluster that \
             scripts/test.sh starts (run it with `--include-ignored` only there)"
        ),
    }
}

pub fn try_connect(
    host: &str,
    port: u16,
    dbname: &str,
) -> Result<postgres::Client, postgres::Error> {
    postgres::Config::new()
        .host_path(host)
        .port(port)
        .user("postgres")
        .dbname(dbname)
        .connect(postgres::NoTls)
}

pub fn connect(host: &str, port: u16, dbname: &str) -> postgres::Client {
    try_connect(host, port, dbname)
        .unwrap_or_else(|e| panic!("connecting to {host}:{port}/{dbname}: {e}"))
}

/// A fresh database with the extension in schema `ids`, which is not on the search_path.
pub fn fresh_database(host: &str, port: u16, db: &str) -> postgres::Client {
    empty_database(
        host,
        port,
        db,
        "CREATE SCHEMA ids; CREATE EXTENSION pg_idgen SCHEMA ids;",
    )
}

/// A new database `db` (dropped first if it is there) where `setup` has run; the superuser's
/// connection to it.
pub fn empty_database(host: &str, port: u16, db: &str, setup: &str) -> postgres::Client {
    let mut admin = connect(host, port, "postgres");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .unwrap();
    let mut c = connect(host, port, db);
    c.batch_execute(setup).unwrap();
    c
}
