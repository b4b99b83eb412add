//! The writer registry's clients against a real server (issue 25): `Registry` (postgres crate)
//! and `AsyncRegistry` (sqlx). scripts/test.sh sets PG_IDGEN_HOST (the socket directory) and
//! PG_IDGEN_PORT of its test cluster. The tests are `#[ignore]`d (a run without a server
//! reports them ignored); scripts/test.sh runs them with `--include-ignored`.
#![cfg(all(feature = "postgres", feature = "sqlx"))]

use pg_idgen_client::registry::{AsyncRegistry, Registry};
use pg_idgen_client::{snowflake, Error};
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DB: &str = "rust_client_registry";
/// What never happens within this is a bug, not a slow machine: the cap of waits for an event.
const GIVE_UP: Duration = Duration::from_secs(60);

mod common;
use common::try_connect as connect;

/// The test cluster, with this file's database made once for all its tests.
fn server() -> (String, u16) {
    let (host, port) = common::server();
    static MADE: OnceLock<()> = OnceLock::new();
    MADE.get_or_init(|| {
        common::fresh_database(&host, port, DB);
    });
    (host, port)
}

fn registry(host: &str, port: u16, writer: &str) -> Registry {
    let host = host.to_string();
    Registry::new(move || connect(&host, port, DB)).writer(writer)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// How many of these Snowflake ids `idgen_writer_of` does not attribute to `writer`.
fn snowflakes_not_of(c: &mut postgres::Client, ids: &[i64], writer: &str) -> i64 {
    c.query_one(
        "SELECT count(*) FROM unnest($1::int8[]) id
         WHERE NOT EXISTS (SELECT FROM ids.idgen_writer_of(id) w WHERE w.writer = $2)",
        &[&ids, &writer],
    )
    .unwrap()
    .get(0)
}

/// The grant's hi (unix ms) and whether it was released, from `idgen_grants`.
fn grant_row(c: &mut postgres::Client, grant_id: i64) -> (i64, bool) {
    let row = c
        .query_one(
            "SELECT floor(extract(epoch FROM hi) * 1000)::int8, released_at IS NOT NULL
             FROM ids.idgen_grants WHERE grant_id = $1",
            &[&grant_id],
        )
        .unwrap();
    (row.get(0), row.get(1))
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn threads_share_one_snowflake_grant() {
    let (host, port) = server();
    let writer = "rust-threads-snowflake";
    let ids = Arc::new(
        registry(&host, port, writer)
            .snowflake(Duration::from_secs(60))
            .unwrap(),
    );
    let worker = ids.worker();
    let all: Vec<i64> = (0..8)
        .map(|_| {
            let ids = ids.clone();
            std::thread::spawn(move || {
                (0..5000)
                    .map(|_| ids.next_id().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let unique: HashSet<i64> = all.iter().copied().collect();
    assert_eq!(unique.len(), all.len(), "duplicate ids");
    assert!(all.iter().all(|id| snowflake::worker(*id) == Ok(worker)));
    let (lo, hi) = ids.window_ms();
    let epoch = ids.epoch_ms();
    assert!(all.iter().all(|id| {
        let t = snowflake::unix_ms(*id, epoch).unwrap();
        lo <= t && t < hi
    }));
    let mut c = connect(&host, port, DB).unwrap();
    assert_eq!(snowflakes_not_of(&mut c, &all, writer), 0);
    // close() moves hi back to just after the last id.
    let (grant_id, _) = ids.grant();
    let last = all.iter().max().unwrap();
    ids.close().unwrap();
    let (hi, released) = grant_row(&mut c, grant_id);
    assert!(released);
    assert_eq!(hi, snowflake::unix_ms(*last, epoch).unwrap() + 1);
    assert!(matches!(ids.next_id(), Err(Error::Closed)));
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn xid12_ids_are_attributed() {
    let (host, port) = server();
    let writer = "rust-threads-xid12";
    let ids = Arc::new(
        registry(&host, port, writer)
            .xid12(Duration::from_secs(60))
            .unwrap(),
    );
    let machine = ids.machine();
    let all: Vec<String> = (0..4)
        .map(|_| {
            let ids = ids.clone();
            std::thread::spawn(move || (0..5000).map(|_| ids.new().unwrap()).collect::<Vec<_>>())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .map(|id| {
            let [a, b, m] = id.machine();
            assert_eq!(u32::from_be_bytes([0, a, b, m]), machine);
            id.to_string()
        })
        .collect();
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), all.len());
    let mut c = connect(&host, port, DB).unwrap();
    let foreign: i64 = c
        .query_one(
            "SELECT count(*) FROM unnest($1::text[]) t
             WHERE NOT EXISTS (SELECT FROM ids.idgen_writer_of(t::ids.xid12) w WHERE w.writer = $2)",
            &[&all, &writer],
        )
        .unwrap()
        .get(0);
    assert_eq!(foreign, 0);
    // Dropped without close: released all the same.
    let (grant_id, _) = ids.grant();
    drop(ids);
    assert!(grant_row(&mut c, grant_id).1);
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn renewal_moves_hi() {
    let (host, port) = server();
    let ids = registry(&host, port, "rust-renewal")
        .snowflake(Duration::from_secs(2))
        .unwrap();
    let (grant_id, generation) = ids.grant();
    let (_, hi) = ids.window_ms();
    ids.next_id().unwrap();
    // The background thread renews at about half the lease: waited for as that event, not
    // for a time (the cap only ends a hang: a renewal that never comes is a bug).
    let asked = std::time::Instant::now();
    while ids.grant().1 == generation && asked.elapsed() < GIVE_UP {
        std::thread::sleep(Duration::from_millis(20));
    }
    let (same, later) = ids.grant();
    assert_eq!(same, grant_id);
    assert!(
        later > generation,
        "no renewal of a 2 s lease in {GIVE_UP:?}"
    );
    let (_, renewed) = ids.window_ms();
    assert!(renewed > hi);
    let mut c = connect(&host, port, DB).unwrap();
    assert_eq!(grant_row(&mut c, grant_id).0, renewed);
    // Past the first window's end, ids go on in the renewed one.
    let mut made = Vec::new();
    while now_ms() < hi + 300 {
        made.push(ids.next_id().unwrap());
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(snowflakes_not_of(&mut c, &made, "rust-renewal"), 0);
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn a_lost_grant_is_replaced() {
    let (host, port) = server();
    let writer = "rust-lost";
    let ids = registry(&host, port, writer)
        .snowflake(Duration::from_secs(30))
        .unwrap();
    let mut made = vec![ids.next_id().unwrap()];
    let (grant_id, _) = ids.grant();
    // Another writer continued the slot: the registry's next free id-time moved past this
    // grant's end, so renewing it is 55000 (grant lost).
    let mut c = connect(&host, port, DB).unwrap();
    c.execute(
        "UPDATE ids.idgen_registry_slot s SET next_free = g.hi + 1
         FROM ids.idgen_registry_grant g
         WHERE g.grant_id = $1 AND s.kind = g.kind AND s.slot = g.slot",
        &[&grant_id],
    )
    .unwrap();
    ids.renew().unwrap();
    let (new_grant, _) = ids.grant();
    assert_ne!(
        new_grant, grant_id,
        "a lost grant must be replaced, not kept"
    );
    made.extend((0..1000).map(|_| ids.next_id().unwrap()));
    assert!(made.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(snowflakes_not_of(&mut c, &made, writer), 0);
    ids.close().unwrap();
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn clocks_outside_the_window_fail_with_the_offset() {
    let (host, port) = server();
    // A clock one lease and more ahead: renewing cannot reach it.
    let ahead = registry(&host, port, "rust-ahead")
        .clock(|| now_ms() + 70_000)
        .snowflake(Duration::from_secs(60))
        .unwrap();
    match ahead.next_id() {
        Err(e @ Error::Grant(_)) => {
            let text = e.to_string();
            assert!(text.contains("ahead"), "{text}");
        }
        other => panic!("expected a clock-ahead error, got {other:?}"),
    }
    // A clock 20 s behind: the window starts at most 5 s before the server's clock, and the
    // generator waits at most 5 s for it.
    let behind = registry(&host, port, "rust-behind")
        .clock(|| now_ms() - 20_000)
        .xid12(Duration::from_secs(60))
        .unwrap();
    match behind.next_id() {
        Err(e @ Error::Grant(_)) => {
            let text = e.to_string();
            assert!(text.contains("behind"), "{text}");
        }
        other => panic!("expected a clock-behind error, got {other:?}"),
    }
    // 2 s behind and 2 s ahead run.
    for offset in [-2000, 2000] {
        let ids = registry(&host, port, "rust-skewed")
            .clock(move || now_ms() + offset)
            .snowflake(Duration::from_secs(60))
            .unwrap();
        ids.next_id().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
async fn sqlx_registry() {
    let (host, port) = server();
    let options = sqlx::postgres::PgConnectOptions::new()
        .socket(&host)
        .port(port)
        .username("postgres")
        .database(DB);
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options)
        .await
        .unwrap();
    let writer = "rust-sqlx";
    let registry = AsyncRegistry::new(pool).writer(writer);
    let ids = Arc::new(registry.snowflake(Duration::from_secs(2)).await.unwrap());
    let (grant_id, generation) = ids.grant();
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let ids = ids.clone();
        tasks.push(tokio::spawn(async move {
            let mut made = Vec::new();
            for _ in 0..2000 {
                made.push(ids.next_id().await.unwrap());
            }
            made
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    // Past half the lease, the next id starts a renewal in a task (without waiting for it).
    tokio::time::sleep(Duration::from_millis(1200)).await;
    all.push(ids.next_id().await.unwrap());
    let asked = std::time::Instant::now();
    while ids.grant().1 == generation && asked.elapsed() < GIVE_UP {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        ids.grant().1 > generation,
        "no renewal {GIVE_UP:?} after half the lease"
    );
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), all.len());
    let xids = registry.xid12(Duration::from_secs(60)).await.unwrap();
    let x = xids.new().await.unwrap();
    xids.close().await.unwrap();
    ids.close().await.unwrap();
    let c = tokio::task::spawn_blocking(move || {
        let mut c = connect(&host, port, DB).unwrap();
        let foreign = snowflakes_not_of(&mut c, &all, writer);
        let released = grant_row(&mut c, grant_id).1;
        let x_of: i64 = c
            .query_one(
                "SELECT count(*) FROM ids.idgen_writer_of($1::text::ids.xid12) WHERE writer = $2",
                &[&x.to_string(), &writer],
            )
            .unwrap()
            .get(0);
        (foreign, released, x_of)
    })
    .await
    .unwrap();
    assert_eq!(c, (0, true, 1));
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn no_lease_is_the_servers_default_and_refusals_have_their_condition() {
    use pg_idgen_client::RegistryCondition;
    let (host, port) = server();
    let registry = registry(&host, port, "rust-default-lease");
    // No lease given: none is sent, and the window is the pool's default for the kind (at most
    // the 10 minutes the client used to send), renewed with the grant's own lease.
    let ids = registry.snowflake(None).unwrap();
    ids.next_id().unwrap();
    let (lo, hi) = ids.window_ms();
    assert!(hi - lo > 1000 && hi - lo <= 605_000, "window {lo}..{hi}");
    let mut c = connect(&host, port, DB).unwrap();
    let lease_ms: i64 = c
        .query_one(
            "SELECT (extract(epoch FROM lease) * 1000)::int8 FROM ids.idgen_grants
             WHERE grant_id = $1",
            &[&ids.grant().0],
        )
        .unwrap()
        .get(0);
    ids.renew().unwrap();
    let (_, renewed) = ids.window_ms();
    assert!(renewed >= hi && renewed <= now_ms() + lease_ms + 1000);
    ids.close().unwrap();
    let xids = registry.xid12(None).unwrap();
    xids.new().unwrap();
    xids.close().unwrap();
    // A lease longer than the pool allows: IG004, LeaseTooLong.
    let e = registry
        .snowflake(Duration::from_secs(400 * 86_400))
        .unwrap_err();
    assert_eq!(
        e.registry_condition(),
        Some(RegistryCondition::LeaseTooLong),
        "{e:?}"
    );
}
