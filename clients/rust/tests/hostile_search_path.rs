//! A hostile public schema (issue 33): a role with no grants fills public (writable by all, as
//! on PostgreSQL 14) with look-alikes of the operators, functions, types and relations the
//! client's statements use (clients/hostile_public.sql). Writers with the default search_path,
//! and with one that puts public before pg_catalog, acquire, renew and release through
//! `Registry` and enrol, renew and release through `EdgeStore`: the window the client believes
//! is exactly the server's at every step, and no look-alike ever ran. scripts/test.sh sets
//! PG_IDGEN_HOST and PG_IDGEN_PORT; they are `#[ignore]`d, so a run without a server says so.
#![cfg(feature = "edge")]

use pg_idgen_client::edge::{EdgeStore, Kind};
use pg_idgen_client::registry::Registry;
use std::time::Duration;

mod common;

const HOSTILE: &str = include_str!("../../hostile_public.sql");
const PATHS: [Option<&str>; 2] = [None, Some("public,pg_catalog")];

/// A fresh database `db` with the extension in public (CREATE EXTENSION's default) and the
/// hostile objects; the superuser's connection to it.
fn hostile_database(host: &str, port: u16, db: &str) -> postgres::Client {
    // One at a time: the hostile script creates a role when it is missing, and two tests doing
    // that at once race (23505 on pg_authid).
    static SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = SETUP
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    common::empty_database(
        host,
        port,
        db,
        &format!("CREATE EXTENSION pg_idgen;\n{HOSTILE}"),
    )
}

/// A writer's connection settings: the superuser, with `path` as its search_path (None: the
/// default, "$user", public).
fn config(host: &str, port: u16, db: &str, path: Option<&str>) -> postgres::Config {
    let mut config = postgres::Config::new();
    config
        .host_path(host)
        .port(port)
        .user("postgres")
        .dbname(db);
    if let Some(path) = path {
        config.options(&format!("-c search_path={path}"));
    }
    config
}

fn writer(host: &str, port: u16, db: &str, path: Option<&str>) -> postgres::Client {
    config(host, port, db, path)
        .connect(postgres::NoTls)
        .unwrap()
}

/// The look-alikes that ran: the attacker's sequence (not rolled back) and its table.
fn hostile_calls(admin: &mut postgres::Client) -> (i64, Vec<String>) {
    let calls: i64 = admin
        .query_one(
            "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.hostile_calls",
            &[],
        )
        .unwrap()
        .get(0);
    let ran = admin
        .query("SELECT what FROM public.hostile_ran", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    (calls, ran)
}

/// The server's window of a grant in id-time (`idgen_registry_grant`) and its epoch.
fn server_window(admin: &mut postgres::Client, grant_id: i64) -> (i64, i64, Option<i64>) {
    let r = admin
        .query_one(
            "SELECT lo, hi, epoch_ms FROM public.idgen_registry_grant \
             WHERE grant_id OPERATOR(pg_catalog.=) $1::pg_catalog.int8",
            &[&grant_id],
        )
        .unwrap();
    (r.get(0), r.get(1), r.get(2))
}

fn released(admin: &mut postgres::Client, grant_id: i64) -> bool {
    admin
        .query_one(
            "SELECT released_at IS NOT NULL FROM public.idgen_grants \
             WHERE grant_id OPERATOR(pg_catalog.=) $1::pg_catalog.int8",
            &[&grant_id],
        )
        .unwrap()
        .get(0)
}

/// The statement the clients sent before issue 33 runs the attacker's operator through this
/// search_path: the trap the tests walk past is armed.
fn assert_trap_armed(host: &str, port: u16, db: &str, admin: &mut postgres::Client) {
    let before = hostile_calls(admin).0;
    writer(host, port, db, None)
        .query_one(
            "SELECT floor(extract(epoch FROM pg_catalog.now()) * 1000)::int8",
            &[],
        )
        .unwrap();
    let (calls, ran) = hostile_calls(admin);
    assert!(
        calls > before && ran.iter().any(|w| w == "*(numeric, integer)"),
        "{calls} {ran:?}"
    );
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn registry_window_is_the_servers_under_a_hostile_public() {
    let (host, port) = common::server();
    let db = "rust_hostile_registry";
    let mut admin = hostile_database(&host, port, db);
    for path in PATHS {
        let (h, name) = (
            host.clone(),
            format!("rust-hostile-{}", path.unwrap_or("default")),
        );
        let registry = Registry::new(move || config(&h, port, db, path).connect(postgres::NoTls))
            .writer(&name);

        let ids = registry.snowflake(Duration::from_secs(60)).unwrap();
        for _ in 0..100 {
            ids.next_id().unwrap();
        }
        for step in ["acquired", "renewed"] {
            let (grant_id, _) = ids.grant();
            let (lo, hi, epoch_ms) = server_window(&mut admin, grant_id);
            let epoch_ms = epoch_ms.expect("a Snowflake grant has an epoch");
            assert_eq!(ids.epoch_ms(), epoch_ms, "{path:?} {step}");
            assert_eq!(
                ids.window_ms(),
                (lo + epoch_ms, hi + epoch_ms),
                "{path:?} {step}"
            );
            ids.renew().unwrap();
        }
        let (snowflake_grant, _) = ids.grant();
        ids.close().unwrap();
        assert!(released(&mut admin, snowflake_grant), "{path:?}");

        let xids = registry.xid12(Duration::from_secs(60)).unwrap();
        for _ in 0..100 {
            xids.next_id().unwrap();
        }
        for step in ["acquired", "renewed"] {
            let (grant_id, _) = xids.grant();
            let (lo, hi, epoch_ms) = server_window(&mut admin, grant_id);
            assert_eq!(epoch_ms, None);
            assert_eq!(xids.window_s(), (lo, hi), "{path:?} {step}");
            xids.renew().unwrap();
        }
        let (xid_grant, _) = xids.grant();
        xids.close().unwrap();
        assert!(released(&mut admin, xid_grant), "{path:?}");
        registry.close().unwrap();

        assert_eq!(hostile_calls(&mut admin), (0, vec![]), "{path:?}");
    }
    assert_trap_armed(&host, port, db, &mut admin);
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn edge_window_is_the_servers_under_a_hostile_public() {
    let (host, port) = common::server();
    let db = "rust_hostile_edge";
    let mut admin = hostile_database(&host, port, db);
    for path in PATHS {
        for kind in [Kind::Xid12, Kind::Snowflake] {
            let mut client = writer(&host, port, db, path);
            let file = rusqlite::Connection::open_in_memory().unwrap();
            let store = EdgeStore::new(&file, kind, Some("hostile-device")).unwrap();
            let unit_us = if kind == Kind::Xid12 { 1_000_000 } else { 1000 };
            let g = store
                .enrol(&mut client, None, Duration::from_secs(86400), "edge")
                .unwrap();
            let check = |admin: &mut postgres::Client, g: &pg_idgen_client::edge::EdgeGrant| {
                let (lo, hi, epoch_ms) = server_window(admin, g.grant_id);
                assert_eq!(g.epoch_ms, epoch_ms);
                let e = epoch_ms.unwrap_or(0) * 1000;
                assert_eq!(
                    (g.lo_us, g.hi_us),
                    (lo * unit_us + e, hi * unit_us + e),
                    "{path:?} {kind:?}"
                );
            };
            check(&mut admin, &g);
            store.next_id().unwrap();
            let renewed = store
                .sync(&mut client, Some(Duration::from_secs(2 * 86400)))
                .unwrap()
                .expect("renewed");
            assert!(renewed.hi_us > g.hi_us);
            check(&mut admin, &renewed);
            store.next_id().unwrap();
            assert!(store.sync(&mut client, None).unwrap().is_none());
            assert!(released(&mut admin, g.grant_id));
            assert_eq!(hostile_calls(&mut admin), (0, vec![]), "{path:?} {kind:?}");
        }
    }
    assert_trap_armed(&host, port, db, &mut admin);
}
