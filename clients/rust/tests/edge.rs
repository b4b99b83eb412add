//! Edge devices with `EdgeStore` against the registry (the Rust twin of
//! clients/python/tests/server/test_edge.py): a device enrols in pool 'edge' for 28 days, makes ids offline
//! into its own SQLite file for days, syncs (idgen_report + idgen_renew); a copy of its file (a
//! restored backup) syncing after the original is found (23505, `Error::EdgeCloned`, both
//! devices named); the merged rows are all covered (idgen_verify); the release frees the
//! id-time after the last id.
//!
//! The devices' clocks are fake (the real time plus the days they spend offline); the server's
//! is real. scripts/test.sh sets PG_IDGEN_HOST (the socket directory) and PG_IDGEN_PORT of its
//! test cluster; the tests are `#[ignore]`d and run there with `--include-ignored`. Each test has its own
//! database, with the extension in schema `ids` (not on the search_path).
#![cfg(feature = "edge")]

use pg_idgen_client::edge::{EdgeId, EdgeStore, Kind};
use pg_idgen_client::{snowflake, Error, Xid};
use rusqlite::Connection;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DAY_MS: i64 = 86_400_000;
const LEASE: Duration = Duration::from_secs(28 * 86_400);

mod common;
use common::{fresh_database, server};

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A device clock the test moves (unix ms), starting at the real time.
#[derive(Clone)]
struct Clock(Arc<AtomicI64>);

impl Clock {
    fn now() -> Clock {
        Clock(Arc::new(AtomicI64::new(now_ms())))
    }
    fn get(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
    fn add(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
    fn f(&self) -> impl Fn() -> i64 + Send + Sync + 'static {
        let c = self.0.clone();
        move || c.load(Ordering::SeqCst)
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pg_idgen_edge_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn device_file(path: &PathBuf) -> Connection {
    let db = Connection::open(path).unwrap();
    db.execute_batch(
        "CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, device TEXT, n INTEGER)",
    )
    .unwrap();
    db
}

/// Rows made over `days` days of the device clock, each id in its row's transaction.
fn offline(
    db: &Connection,
    store: &EdgeStore<'_>,
    clock: &Clock,
    days: i64,
    per_day: i64,
    start: i64,
) -> Vec<EdgeId> {
    let mut ids = Vec::new();
    for i in 0..days * per_day {
        let tx = db.unchecked_transaction().unwrap();
        let id = store.next_id().unwrap();
        tx.execute(
            "INSERT INTO rows VALUES (?1, ?2, ?3)",
            (id.to_string(), store.device(), start + i),
        )
        .unwrap();
        tx.commit().unwrap();
        ids.push(id);
        clock.add(DAY_MS / per_day);
    }
    ids
}

/// (pool, slot, lo_us, hi_us, released) of a grant, as idgen_grants shows it.
fn grant_row(pg: &mut postgres::Client, grant_id: i64) -> (String, i32, i64, i64, bool) {
    let r = pg
        .query_one(
            "SELECT pool, slot, floor(extract(epoch FROM lo) * 1000000)::int8, \
             floor(extract(epoch FROM hi) * 1000000)::int8, released_at IS NOT NULL \
             FROM ids.idgen_grants WHERE grant_id = $1",
            &[&grant_id],
        )
        .unwrap();
    (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4))
}

fn report(pg: &mut postgres::Client, grant_id: i64) -> (String, i64) {
    let r = pg
        .query_one(
            "SELECT device, syncs FROM ids.idgen_registry_report WHERE grant_id = $1",
            &[&grant_id],
        )
        .unwrap();
    (r.get(0), r.get(1))
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn xid12_edge_offline_sync_clone_merge_release() {
    let (host, port) = server();
    let mut pg = fresh_database(&host, port, "rust_client_edge");
    let dir = temp_dir("xid12");
    let clock_a = Clock::now();
    let a = device_file(&dir.join("phone-a.db"));
    let store_a = EdgeStore::new(&a, Kind::Xid12, Some("phone-a"))
        .unwrap()
        .clock(clock_a.f());
    let g = store_a
        .enrol(&mut pg, Some("edge-test@phone-a"), LEASE, "edge")
        .unwrap();
    assert!((12_582_912..16_777_216).contains(&g.slot), "{g:?}");
    assert_eq!((g.syncs, g.last_id, g.epoch_ms), (0, None, None));
    let (pool, slot, lo, hi, _) = grant_row(&mut pg, g.grant_id);
    assert_eq!(
        (pool.as_str(), i64::from(slot), lo, hi),
        ("edge", g.slot, g.lo_us, g.hi_us)
    );
    let span = hi - lo;
    assert!(
        (28 * DAY_MS * 1000..=(28 * DAY_MS + 10_000) * 1000).contains(&span),
        "{span}"
    );
    let e = store_a
        .enrol(&mut pg, Some("edge-test@phone-a"), LEASE, "edge")
        .unwrap_err();
    assert!(e.to_string().contains("already holds grant"), "{e}");

    // Three days offline, then back online: report 1, and the window runs 28 days from now.
    let before = offline(&a, &store_a, &clock_a, 3, 40, 0);
    for id in &before {
        let x = id.xid().unwrap();
        assert_eq!(
            i64::from(u32::from_be_bytes([
                0,
                x.machine()[0],
                x.machine()[1],
                x.machine()[2]
            ])),
            g.slot
        );
    }
    let g2 = store_a.sync(&mut pg, Some(LEASE)).unwrap().unwrap();
    assert_eq!(g2.syncs, 1);
    assert_eq!(g2.last_id, before.last().copied());
    assert!(g2.hi_us >= hi);
    assert_eq!(g2.hi_us, grant_row(&mut pg, g.grant_id).3);
    assert_eq!(report(&mut pg, g.grant_id), ("phone-a".to_string(), 1));

    // A backup of the file, restored on a second device later.
    let b_path = dir.join("phone-b.db");
    a.execute("VACUUM INTO ?1", [b_path.to_str().unwrap()])
        .unwrap();
    let b = device_file(&b_path);
    let clock_b = Clock::now();
    clock_b.0.store(clock_a.get(), Ordering::SeqCst);
    let store_b = EdgeStore::new(&b, Kind::Xid12, Some("phone-b"))
        .unwrap()
        .clock(clock_b.f());
    assert_eq!(store_b.grant().unwrap().unwrap(), g2);

    // Both go on offline from the same state and the same time: the same ids.
    let after_a = offline(&a, &store_a, &clock_a, 2, 40, 1000);
    let after_b = offline(&b, &store_b, &clock_b, 2, 40, 1000);
    assert_eq!(
        after_a, after_b,
        "why a copy must be found before the rows are merged"
    );
    assert_eq!(
        store_a.sync(&mut pg, Some(LEASE)).unwrap().unwrap().syncs,
        2
    );
    let e = store_b.sync(&mut pg, Some(LEASE)).unwrap_err();
    match &e {
        Error::EdgeCloned {
            message,
            detail,
            hint,
        } => {
            assert!(
                message.contains(&format!("grant {} is used by two devices", g.grant_id)),
                "{message}"
            );
            let detail = detail.as_deref().unwrap_or_default();
            assert!(
                detail.contains("'phone-b'") && detail.contains("'phone-a'"),
                "{detail}"
            );
            assert!(
                hint.as_deref().unwrap_or_default().contains("idgen_verify"),
                "{hint:?}"
            );
        }
        other => panic!("expected EdgeCloned, got {other:?}"),
    }
    assert!(e.to_string().contains("(DETAIL: Device 'phone-b'"), "{e}");
    // The copy makes no more ids of the grant.
    let e = store_b.next_id().unwrap_err();
    assert!(matches!(e, Error::EdgeCloned { .. }), "{e}");
    assert!(store_b.grant().unwrap().unwrap().cloned.is_some());
    assert_eq!(report(&mut pg, g.grant_id), ("phone-a".to_string(), 2));

    // The original's rows merged into PostgreSQL: every id covered by the grant.
    let rows: Vec<String> = {
        let mut st = a.prepare("SELECT id FROM rows ORDER BY n").unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let made: Vec<String> = before
        .iter()
        .chain(&after_a)
        .map(ToString::to_string)
        .collect();
    assert_eq!(rows, made);
    pg.batch_execute("CREATE TABLE staging (id ids.xid12 PRIMARY KEY)")
        .unwrap();
    let inserted = pg
        .execute(
            "INSERT INTO staging SELECT unnest($1::text[])::ids.xid12",
            &[&rows],
        )
        .unwrap();
    assert_eq!(inserted as usize, made.len());
    let unverified: i64 = pg
        .query_one(
            "SELECT count(*) FROM ids.idgen_verify('staging', 'id')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(unverified, 0);
    let writers: Vec<String> = pg
        .query(
            "SELECT DISTINCT w.writer FROM staging, ids.idgen_writer_of(staging.id) w",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(writers, ["edge-test@phone-a"]);

    // Done with the device: the window ends just after its last id, the rest is free.
    let last: Xid = store_a
        .grant()
        .unwrap()
        .unwrap()
        .last_id
        .unwrap()
        .xid()
        .unwrap();
    assert_eq!(store_a.sync(&mut pg, None).unwrap(), None);
    assert_eq!(store_a.grant().unwrap(), None);
    let (_, _, _, hi, released) = grant_row(&mut pg, g.grant_id);
    assert!(released);
    assert_eq!(hi, (i64::from(last.unix_seconds()) + 1) * 1_000_000);
    let left: i64 = a
        .query_row("SELECT count(*) FROM pg_idgen_edge", [], |r| r.get(0))
        .unwrap();
    assert_eq!(left, 0);
    drop((store_a, store_b));
    drop((a, b));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn snowflake_edge_sync_and_release() {
    let (host, port) = server();
    let mut pg = fresh_database(&host, port, "rust_client_edge_sf");
    let dir = temp_dir("snowflake");
    let clock = Clock::now();
    let d = device_file(&dir.join("box.db"));
    let store = EdgeStore::new(&d, Kind::Snowflake, Some("box-1"))
        .unwrap()
        .clock(clock.f());
    let week = Duration::from_secs(7 * 86_400);
    let g = store
        .enrol(&mut pg, Some("edge-test@box-1"), week, "edge")
        .unwrap();
    assert!((768..=1023).contains(&g.slot), "{g:?}");
    let epoch = g.epoch_ms.unwrap();
    let mut ids = offline(&d, &store, &clock, 2, 50, 0);
    for id in &ids {
        assert_eq!(
            i64::from(snowflake::worker(id.snowflake().unwrap()).unwrap()),
            g.slot
        );
    }
    assert_eq!(store.sync(&mut pg, Some(week)).unwrap().unwrap().syncs, 1);
    ids.extend(offline(&d, &store, &clock, 1, 50, 1000));
    pg.batch_execute("CREATE TABLE staging (id bigint PRIMARY KEY)")
        .unwrap();
    let values: Vec<i64> = ids.iter().map(|i| i.snowflake().unwrap()).collect();
    pg.execute("INSERT INTO staging SELECT unnest($1::int8[])", &[&values])
        .unwrap();
    let unverified: i64 = pg
        .query_one(
            "SELECT count(*) FROM ids.idgen_verify('staging', 'id')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(unverified, 0);

    // A wrong token is the server's 42501, not swallowed; the store keeps its grant.
    d.execute("UPDATE pg_idgen_edge SET token = token + 1", [])
        .unwrap();
    let e = store.sync(&mut pg, Some(week)).unwrap_err();
    assert!(
        matches!(&e, Error::Registry { sqlstate: Some(code), .. } if code == "42501"),
        "{e:?}"
    );
    assert_eq!(store.grant().unwrap().unwrap().syncs, 1);
    d.execute("UPDATE pg_idgen_edge SET token = token - 1", [])
        .unwrap();

    // The release: the window ends one millisecond after the last id.
    assert_eq!(store.sync(&mut pg, None).unwrap(), None);
    let (_, _, _, hi, released) = grant_row(&mut pg, g.grant_id);
    assert!(released);
    let last = *values.last().unwrap();
    assert_eq!(hi, (snowflake::unix_ms(last, epoch).unwrap() + 1) * 1000);
    drop(store);
    drop(d);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sync whose report the server committed but whose reply was lost: the file still holds its
/// count and the report's attempt number, and the next sync sends the same report again, which
/// the registry answers as before instead of taking it for a copy (23505).
#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn a_lost_sync_reply_is_not_taken_for_a_copy() {
    let (host, port) = server();
    let mut pg = fresh_database(&host, port, "rust_client_edge_lost_reply");
    let dir = temp_dir("lost-reply");
    let clock = Clock::now();
    let db = device_file(&dir.join("tablet.db"));
    let store = EdgeStore::new(&db, Kind::Xid12, Some("tablet"))
        .unwrap()
        .clock(clock.f());
    let g = store
        .enrol(&mut pg, Some("edge-test@tablet"), LEASE, "edge")
        .unwrap();
    offline(&db, &store, &clock, 1, 10, 0);
    // The report as the sync sends it, committed on the server; the reply never reached the
    // device, which had stored the attempt number before sending.
    db.execute("UPDATE pg_idgen_edge SET attempt = 424242", [])
        .unwrap();
    let token: i64 = db
        .query_row("SELECT token FROM pg_idgen_edge", [], |r| r.get(0))
        .unwrap();
    let count: i64 = pg
        .query_one(
            "SELECT ids.idgen_report($1, $2, 'tablet', 0, NULL, 424242)",
            &[&g.grant_id, &token],
        )
        .unwrap()
        .get(0);
    assert_eq!(count, 1);
    offline(&db, &store, &clock, 1, 10, 10);
    let again = store.sync(&mut pg, Some(LEASE)).unwrap().unwrap();
    assert_eq!(again.syncs, 1, "the count it missed, not EdgeCloned");
    let attempt: Option<i64> = db
        .query_row("SELECT attempt FROM pg_idgen_edge", [], |r| r.get(0))
        .unwrap();
    assert_eq!(attempt, None, "cleared with the reply");
    assert_eq!(report(&mut pg, g.grant_id), ("tablet".to_string(), 1));
    assert_eq!(store.sync(&mut pg, Some(LEASE)).unwrap().unwrap().syncs, 2);
}
