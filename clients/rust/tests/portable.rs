//! The portable SQL edition (portable/: `xid12` a domain over text) with both drivers:
//! `edition::detect` says which edition, an `Xid` reads from the text the server sends, binds for
//! `WHERE id = $1` and keyset pages (`id > $1`: every row once) in binary mode (the `postgres`
//! crate adapts to the parameter's type, text; sqlx binds `xid.to_string()`), and a native
//! database says native. The writer registry's `Registry` and `AsyncRegistry` get a grant of
//! each kind from the plain script's registry (found by the edition lookup, not `pg_extension`),
//! as the writer role with an empty `search_path`. The portable database is made here: the plain
//! script sent through the driver as a role that owns the database and nothing else (its psql
//! variable, schema, substituted), and the writer grants of portable/README.md (the registry's
//! included: the writer admitted to pool `app`). `#[ignore]`d like the other server tests
//! (scripts/test.sh: `--include-ignored`).
#![cfg(all(feature = "postgres", feature = "sqlx"))]

use pg_idgen_client::edition::{self, Edition};
use pg_idgen_client::registry::{AsyncRegistry, Registry};
use pg_idgen_client::{snowflake, Error, Xid};
use std::time::Duration;

mod common;
use common::{connect, server};

const DB: &str = "rust_client_portable";
const OWNER: &str = "rust_client_portable_owner";
const WRITER: &str = "rust_client_portable_writer";
const ROWS: i32 = 40;
const PAGE: i64 = 7;
/// The server's own Snowflake worker id (`idgen_config`): reserved by the registry, never granted.
const SERVER_WORKER: u16 = 5;

/// Installs the plain script as the README says, with psql (`-v schema=idgen`), as the owner:
/// it is a psql script (`\if`, `\gset`), not SQL a driver can send. psql from PG_IDGEN_BINDIR
/// when set, else the first on PATH (scripts/test.sh puts the server's bin directory first).
fn install_portable(host: &str, port: u16) {
    let dist = concat!(env!("CARGO_MANIFEST_DIR"), "/../../portable/dist");
    let mut names: Vec<String> = std::fs::read_dir(dist)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("pg_idgen_portable--") && n.matches("--").count() == 1)
        .collect();
    names.sort();
    let name = names
        .pop()
        .expect("a portable install script in portable/dist");
    let psql = std::env::var("PG_IDGEN_BINDIR")
        .map(|bin| format!("{bin}/psql"))
        .unwrap_or_else(|_| "psql".to_string());
    let out = std::process::Command::new(psql)
        .args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-v",
            "schema=idgen",
            "-h",
            host,
        ])
        .args(["-p", &port.to_string(), "-U", OWNER, "-d", DB, "-f"])
        .arg(format!("{dist}/{name}"))
        .output()
        .expect("psql runs");
    assert!(
        out.status.success(),
        "psql -f {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn connect_as(host: &str, port: u16, user: &str) -> postgres::Client {
    postgres::Config::new()
        .host_path(host)
        .port(port)
        .user(user)
        .dbname(DB)
        .connect(postgres::NoTls)
        .unwrap()
}

fn make_portable(host: &str, port: u16) {
    let mut admin = connect(host, port, "postgres");
    // One statement a call: DROP DATABASE and CREATE DATABASE refuse a multi-statement batch.
    for sql in [
        format!("DROP DATABASE IF EXISTS {DB} WITH (FORCE)"),
        format!("DROP ROLE IF EXISTS {WRITER}"),
        format!("DROP ROLE IF EXISTS {OWNER}"),
        format!("CREATE ROLE {OWNER} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB"),
        format!("CREATE ROLE {WRITER} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB"),
    ] {
        admin.batch_execute(&sql).unwrap();
    }
    admin
        .batch_execute(&format!("CREATE DATABASE {DB} OWNER {OWNER}"))
        .unwrap();
    install_portable(host, port);
    let mut owner = connect_as(host, port, OWNER);
    owner
        .batch_execute(&format!(
            "GRANT USAGE ON SCHEMA idgen TO {WRITER};
             GRANT SELECT ON idgen.idgen_config TO {WRITER};
             GRANT EXECUTE ON FUNCTION idgen.gen_xid12(), idgen.gen_xid12(timestamptz),
                                       idgen.gen_snowflake(), idgen.rapkey_next(text) TO {WRITER};
             CREATE TABLE public.items (id idgen.xid12 PRIMARY KEY DEFAULT idgen.gen_xid12(),
                                        n int NOT NULL);
             GRANT SELECT, INSERT, DELETE ON public.items TO {WRITER};
             UPDATE idgen.idgen_config SET worker_id = {SERVER_WORKER};
             SELECT idgen.idgen_pool_allow('app', '{WRITER}', 8);"
        ))
        .unwrap();
    let version: String = owner
        .query_one("SELECT idgen.idgen_portable_version()", &[])
        .unwrap()
        .get(0);
    assert!(!version.is_empty());
}

fn floor() -> Xid {
    "00000000000000000000".parse().unwrap()
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
async fn portable_edition() {
    let (host, port) = server();
    let ids = {
        let (host, port) = (host.clone(), port);
        tokio::task::spawn_blocking(move || postgres_crate(&host, port))
            .await
            .unwrap()
    };
    sqlx_driver(&host, port, &ids).await;
    {
        let (host, port) = (host.clone(), port);
        tokio::task::spawn_blocking(move || {
            registry_blocking(&host, port);
            #[cfg(feature = "edge")]
            edge_store(&host, port);
        })
        .await
        .unwrap();
    }
    registry_async(&host, port).await;
    tokio::task::spawn_blocking(move || planted(&host, port))
        .await
        .unwrap();
}

/// The writer role's connection string, with an empty `search_path`: the registry names every
/// object it uses.
fn writer_dsn(host: &str, port: u16) -> String {
    format!("host={host} port={port} user={WRITER} dbname={DB} options='-c search_path='")
}

/// `Registry` (the `postgres` crate) as the writer role: a grant of each kind from the plain
/// script's registry, ids of its slots, strictly increasing, that `idgen_writer_of` gives to
/// this writer; `close()` releases both grants.
fn registry_blocking(host: &str, port: u16) {
    let writer = "rust-portable-blocking";
    let reg = Registry::connect(&writer_dsn(host, port))
        .unwrap()
        .writer(writer);
    let snow = reg.snowflake(None).unwrap();
    let xid = reg.xid12(Duration::from_secs(600)).unwrap();
    let sids: Vec<i64> = (0..500).map(|_| snow.next_id().unwrap()).collect();
    let xids: Vec<Xid> = (0..500).map(|_| xid.new().unwrap()).collect();
    let made = Made {
        writer,
        grants: [snow.grant().0, xid.grant().0],
        worker: snow.worker(),
        machine: xid.machine(),
        sids,
        xids,
    };
    reg.close().unwrap();
    assert!(matches!(snow.next_id(), Err(Error::Closed)));
    made.check(host, port);
}

/// `EdgeStore` as the writer role (admitted to pool `edge`): enrols an xid12 grant in a SQLite
/// file, makes ids of its slot, syncs (`idgen_report`, `idgen_renew`) and releases, all in the
/// plain script's registry.
#[cfg(feature = "edge")]
fn edge_store(host: &str, port: u16) {
    use pg_idgen_client::edge::{EdgeStore, Kind};

    connect_as(host, port, OWNER)
        .batch_execute(&format!(
            "SELECT idgen.idgen_pool_allow('edge', '{WRITER}', 4)"
        ))
        .unwrap();
    let mut w: postgres::Client = writer_dsn(host, port)
        .parse::<postgres::Config>()
        .unwrap()
        .connect(postgres::NoTls)
        .unwrap();
    let file = rusqlite::Connection::open_in_memory().unwrap();
    let store = EdgeStore::new(&file, Kind::Xid12, Some("rust-portable-device")).unwrap();
    let g = store
        .enrol(&mut w, None, Duration::from_secs(86_400), "edge")
        .unwrap();
    let ids: Vec<Xid> = (0..20)
        .map(|_| store.next_id().unwrap().xid().unwrap())
        .collect();
    assert!(ids.windows(2).all(|p| p[0] < p[1]));
    assert!(ids.iter().all(|x| {
        let [a, b, c] = x.machine();
        i64::from(u32::from_be_bytes([0, a, b, c])) == g.slot
    }));
    let synced = store
        .sync(&mut w, Some(Duration::from_secs(86_400)))
        .unwrap();
    assert_eq!(synced.map(|s| s.grant_id), Some(g.grant_id));
    assert!(store.sync(&mut w, None).unwrap().is_none());
    let mut owner = connect_as(host, port, OWNER);
    let row = owner
        .query_one(
            "SELECT pool, db_role::text, released_at IS NOT NULL,
                    (SELECT count(*) FROM unnest($2::text[]) x
                      WHERE NOT EXISTS (SELECT FROM idgen.idgen_writer_of(x::idgen.xid12) o
                                         WHERE o.grant_id = $1))
               FROM idgen.idgen_grants WHERE grant_id = $1",
            &[
                &g.grant_id,
                &ids.iter().map(Xid::to_string).collect::<Vec<_>>(),
            ],
        )
        .unwrap();
    let got: (String, String, bool, i64) = (row.get(0), row.get(1), row.get(2), row.get(3));
    assert_eq!(got, ("edge".into(), WRITER.into(), true, 0));
}

/// `AsyncRegistry` (sqlx) as the writer role, on a pool with an empty `search_path`: the same.
async fn registry_async(host: &str, port: u16) {
    use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

    let writer = "rust-portable-async";
    let options = PgConnectOptions::new()
        .socket(host)
        .port(port)
        .username(WRITER)
        .database(DB)
        .options([("search_path", "")]);
    let pool = PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    let reg = AsyncRegistry::new(pool.clone()).writer(writer);
    let snow = reg.snowflake(None).await.unwrap();
    let xid = reg.xid12(Duration::from_secs(600)).await.unwrap();
    let (mut sids, mut xids) = (Vec::new(), Vec::new());
    for _ in 0..500 {
        sids.push(snow.next_id().await.unwrap());
        xids.push(xid.new().await.unwrap());
    }
    let made = Made {
        writer,
        grants: [snow.grant().0, xid.grant().0],
        worker: snow.worker(),
        machine: xid.machine(),
        sids,
        xids,
    };
    snow.close().await.unwrap();
    xid.close().await.unwrap();
    pool.close().await;
    let (host, port) = (host.to_string(), port);
    tokio::task::spawn_blocking(move || made.check(&host, port))
        .await
        .unwrap();
}

/// What a registry's generators made: the Snowflake grant's and the xid12 grant's ids.
struct Made {
    writer: &'static str,
    grants: [i64; 2],
    worker: u16,
    machine: u32,
    sids: Vec<i64>,
    xids: Vec<Xid>,
}

impl Made {
    /// The ids are of the grants' slots and strictly increasing; as the owner, every id is this
    /// writer's (`idgen_writer_of`), and the grants are the writer role's, in pool `app`,
    /// released.
    fn check(&self, host: &str, port: u16) {
        assert_ne!(self.worker, SERVER_WORKER, "the server's own worker id");
        assert!(self.sids.windows(2).all(|w| w[0] < w[1]));
        assert!(self
            .sids
            .iter()
            .all(|id| snowflake::worker(*id) == Ok(self.worker)));
        assert!(self.xids.windows(2).all(|w| w[0] < w[1]));
        assert!(self.xids.iter().all(|x| {
            let [a, b, c] = x.machine();
            u32::from_be_bytes([0, a, b, c]) == self.machine
        }));
        let mut owner = connect_as(host, port, OWNER);
        let texts: Vec<String> = self.xids.iter().map(Xid::to_string).collect();
        let others: i64 = owner
            .query_one(
                "SELECT (SELECT count(*) FROM unnest($1::int8[]) i
                          WHERE NOT EXISTS (SELECT FROM idgen.idgen_writer_of(i) w
                                             WHERE w.writer = $3))
                      + (SELECT count(*) FROM unnest($2::text[]) x
                          WHERE NOT EXISTS (SELECT FROM idgen.idgen_writer_of(x::idgen.xid12) w
                                             WHERE w.writer = $3))",
                &[&self.sids, &texts, &self.writer],
            )
            .unwrap()
            .get(0);
        assert_eq!(others, 0, "ids not given to {}", self.writer);
        let rows: Vec<(String, i32, String, String, bool)> = owner
            .query(
                "SELECT kind, slot, db_role::text, pool, released_at IS NOT NULL
                   FROM idgen.idgen_grants WHERE grant_id = ANY($1) ORDER BY kind",
                &[&self.grants.to_vec()],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
            .collect();
        assert_eq!(
            rows,
            [
                ("snowflake", i32::from(self.worker)),
                ("xid12", self.machine as i32)
            ]
            .map(|(kind, slot)| (
                kind.to_string(),
                slot,
                WRITER.to_string(),
                "app".to_string(),
                true
            ))
        );
    }
}

const MALLORY: &str = "rust_client_portable_mallory";

/// A look-alike portable edition in `schema`: a domain xid12 over text and the version function.
fn plant(schema: &str) -> String {
    format!(
        "CREATE SCHEMA {schema};
         CREATE DOMAIN {schema}.xid12 AS text CHECK (VALUE IS NULL);
         CREATE FUNCTION {schema}.idgen_portable_version() RETURNS text LANGUAGE sql
             AS $$SELECT '9'$$;"
    )
}

fn connect_to(host: &str, port: u16, user: &str, db: &str) -> postgres::Client {
    postgres::Config::new()
        .host_path(host)
        .port(port)
        .user(user)
        .dbname(db)
        .connect(postgres::NoTls)
        .unwrap()
}

/// A role that is not the database owner plants a look-alike in a schema sorting first (visible
/// to it, the real one not): not a candidate, so no ambiguity, and alone it is no edition. Two
/// candidates made by the owner: an error naming both schemas, not a pick by name.
fn planted(host: &str, port: u16) {
    let alone = "rust_client_planted_only";
    let mut admin = connect(host, port, "postgres");
    admin
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS {MALLORY};
             CREATE ROLE {MALLORY} LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB;
             GRANT CREATE ON DATABASE {DB} TO {MALLORY};"
        ))
        .unwrap();
    let mut m = connect_as(host, port, MALLORY);
    m.batch_execute(&plant("aaa")).unwrap();
    m.batch_execute("SET search_path = aaa").unwrap();
    assert_eq!(edition::detect(&mut m).unwrap(), Some(Edition::Portable));
    let mut w = connect_as(host, port, WRITER);
    assert_eq!(edition::detect(&mut w).unwrap(), Some(Edition::Portable));
    // The Registry too: its grant comes from idgen (aaa has no idgen_acquire to call).
    let reg = Registry::connect(&writer_dsn(host, port))
        .unwrap()
        .writer("rust-portable-planted");
    let g = reg.snowflake(None).unwrap();
    assert_eq!(snowflake::worker(g.next_id().unwrap()), Ok(g.worker()));
    reg.close().unwrap();
    drop(m);
    connect(host, port, DB)
        .batch_execute(&format!("DROP OWNED BY {MALLORY} CASCADE"))
        .unwrap();

    let mut owner = connect_as(host, port, OWNER);
    owner.batch_execute(&plant("aaa")).unwrap();
    let err = edition::detect(&mut w).unwrap_err();
    let detail = err
        .as_db_error()
        .map_or_else(|| err.to_string(), |e| e.message().to_owned());
    assert!(
        detail.contains("more than one portable edition, in schemas aaa, idgen"),
        "{detail}"
    );
    let reg = Registry::connect(&writer_dsn(host, port))
        .unwrap()
        .writer("rust-portable-two");
    match reg.snowflake(None) {
        Err(Error::Registry { message, .. }) => assert!(
            message.contains("more than one portable edition, in schemas aaa, idgen"),
            "{message}"
        ),
        other => panic!("two owner-made editions: {other:?}"),
    }
    owner.batch_execute("DROP SCHEMA aaa CASCADE").unwrap();
    assert_eq!(edition::detect(&mut w).unwrap(), Some(Edition::Portable));

    drop(common::empty_database(host, port, alone, ""));
    admin
        .batch_execute(&format!("GRANT CREATE ON DATABASE {alone} TO {MALLORY}"))
        .unwrap();
    let mut m = connect_to(host, port, MALLORY, alone);
    m.batch_execute(&plant("aaa")).unwrap();
    m.batch_execute("SET search_path = aaa").unwrap();
    assert_eq!(edition::detect(&mut m).unwrap(), None);
    drop(m);
    connect(host, port, alone)
        .batch_execute(&format!("DROP OWNED BY {MALLORY} CASCADE"))
        .unwrap();
    admin
        .batch_execute(&format!("DROP ROLE {MALLORY}"))
        .unwrap();
}

/// The `postgres` crate (binary results and parameters): returns the ids in order.
fn postgres_crate(host: &str, port: u16) -> Vec<Xid> {
    make_portable(host, port);
    let mut c = connect_as(host, port, WRITER);
    assert_eq!(edition::detect(&mut c).unwrap(), Some(Edition::Portable));
    assert_eq!(Edition::Portable.to_string(), "portable");
    c.batch_execute(&format!(
        "INSERT INTO public.items (n) SELECT g FROM generate_series(1, {ROWS}) g"
    ))
    .unwrap();
    let texts: Vec<String> = c
        .query("SELECT id FROM public.items ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    // The text the server sends reads as Xid.
    let ids: Vec<Xid> = c
        .query("SELECT id FROM public.items ORDER BY id", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(ids.len(), ROWS as usize);
    assert_eq!(ids.iter().map(|x| x.to_string()).collect::<Vec<_>>(), texts);
    // WHERE id = $1: the server types $1 as text; the Xid binds its text.
    let n: i32 = c
        .query_one("SELECT n FROM public.items WHERE id = $1", &[&ids[3]])
        .unwrap()
        .get(0);
    let again: Xid = c
        .query_one("SELECT id FROM public.items WHERE n = $1", &[&n])
        .unwrap()
        .get(0);
    assert_eq!(again, ids[3]);
    // Keyset pages from the smallest id: every row once, in order.
    let mut seen = Vec::new();
    let mut last = floor();
    loop {
        let page: Vec<Xid> = c
            .query(
                "SELECT id FROM public.items WHERE id > $1 ORDER BY id LIMIT $2",
                &[&last, &PAGE],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let Some(end) = page.last() else { break };
        last = *end;
        seen.extend(page);
    }
    assert_eq!(seen, ids);
    // INSERT: $1 is typed as the portable domain; = ANY($1) of a Vec<Xid> (text[]).
    let made: Xid = "9m4e2mr0ui3e8a215n4g".parse().unwrap();
    c.execute("INSERT INTO public.items (id, n) VALUES ($1, 0)", &[&made])
        .unwrap();
    let count: i64 = c
        .query_one(
            "SELECT count(*) FROM public.items WHERE id = ANY($1)",
            &[&vec![made, ids[0], ids[1]]],
        )
        .unwrap()
        .get(0);
    assert_eq!(count, 3);
    c.execute("DELETE FROM public.items WHERE id = $1", &[&made])
        .unwrap();
    ids
}

/// sqlx (binary): reads Xid from the text; binds the text of an Xid.
async fn sqlx_driver(host: &str, port: u16, ids: &[Xid]) {
    use sqlx::postgres::PgConnectOptions;
    use sqlx::Connection;

    let options = PgConnectOptions::new()
        .socket(host)
        .port(port)
        .username(WRITER)
        .database(DB);
    let mut c = sqlx::PgConnection::connect_with(&options).await.unwrap();
    assert_eq!(
        edition::detect_sqlx(&mut c).await.unwrap(),
        Some(Edition::Portable)
    );
    let got: Vec<Xid> = sqlx::query_scalar("SELECT id FROM public.items ORDER BY id")
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(got, ids);
    let found: Xid = sqlx::query_scalar("SELECT id FROM public.items WHERE id = $1")
        .bind(ids[5].to_string())
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(found, ids[5]);
    let mut seen = Vec::new();
    let mut last = floor();
    loop {
        let page: Vec<Xid> =
            sqlx::query_scalar("SELECT id FROM public.items WHERE id > $1 ORDER BY id LIMIT $2")
                .bind(last.to_string())
                .bind(PAGE)
                .fetch_all(&mut c)
                .await
                .unwrap();
        let Some(end) = page.last() else { break };
        last = *end;
        seen.extend(page);
    }
    assert_eq!(seen, ids);
    c.close().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
async fn native_edition() {
    use sqlx::postgres::PgConnectOptions;
    use sqlx::Connection;

    let (host, port) = server();
    let db = "rust_client_native_edition";
    {
        let (host, port) = (host.clone(), port);
        tokio::task::spawn_blocking(move || {
            let mut c = common::fresh_database(&host, port, db);
            assert_eq!(edition::detect(&mut c).unwrap(), Some(Edition::Native));
            let x: Xid = c.query_one("SELECT ids.gen_xid12()", &[]).unwrap().get(0);
            let back: Xid = c.query_one("SELECT $1::ids.xid12", &[&x]).unwrap().get(0);
            assert_eq!(back, x);
            let mut none = common::empty_database(&host, port, "rust_client_no_edition", "");
            assert_eq!(edition::detect(&mut none).unwrap(), None);
        })
        .await
        .unwrap();
    }
    let options = PgConnectOptions::new()
        .socket(&host)
        .port(port)
        .username("postgres")
        .database(db);
    let mut c = sqlx::PgConnection::connect_with(&options).await.unwrap();
    assert_eq!(
        edition::detect_sqlx(&mut c).await.unwrap(),
        Some(Edition::Native)
    );
    c.close().await.unwrap();
}
