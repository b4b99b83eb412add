//! The edge store's unit tests (no server): the shared vectors (edge_store.json, edge_traces.json)
//! through the store, and its file's rules.
use super::*;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

const S: i64 = 1_800_000_000; // a unix second
const DAY_US: i64 = 86_400_000_000;
const EPOCH: i64 = idgen_core::snowflake::DEFAULT_EPOCH_MS;

/// tests/vectors/edge_store.json: the table, its columns and the enrolment row, stated once
/// for both clients (the Python client's tests compare its statements with the same file).
struct Shared {
    table: String,
    columns: String,
    enrol: String,
}

fn shared() -> Shared {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/edge_store.json"
    );
    let text = std::fs::read_to_string(path).expect("tests/vectors/edge_store.json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let columns: Vec<&str> = v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    Shared {
        table: v["table"].as_str().unwrap().to_string(),
        columns: columns.join(", "),
        enrol: v["enrol"].as_str().unwrap().to_string(),
    }
}

/// A clock the test moves (unix ms).
#[derive(Clone)]
struct Clock(Arc<AtomicI64>);

impl Clock {
    fn at(ms: i64) -> Clock {
        Clock(Arc::new(AtomicI64::new(ms)))
    }
    fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
    fn f(&self) -> impl Fn() -> i64 + Send + Sync + 'static {
        let c = self.0.clone();
        move || c.load(Ordering::SeqCst)
    }
}

fn store<'c>(db: &'c Connection, kind: Kind, clock: &Clock) -> EdgeStore<'c> {
    EdgeStore::new(db, kind, Some("test-device"))
        .unwrap()
        .clock(clock.f())
}

/// A grant as `enrol` keeps it, without a server.
fn grant(db: &Connection, kind: Kind, slot: i64, lo_us: i64, hi_us: i64) {
    let epoch = (kind == Kind::Snowflake).then_some(EPOCH);
    db.execute("DELETE FROM pg_idgen_edge WHERE kind = ?1", [kind.sql()])
        .unwrap();
    db.execute(
        &shared().enrol,
        params![kind.sql(), 7, 12345, slot, lo_us, hi_us, epoch, "w"],
    )
    .unwrap();
}

fn temp_path(name: &str) -> std::path::PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let p = std::env::temp_dir().join(format!(
        "pg_idgen_edge_{}_{n}_{name}.db",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&p);
    p
}

fn commit_one(db: &Connection, store: &EdgeStore<'_>) -> EdgeId {
    let tx = db.unchecked_transaction().unwrap();
    let id = store.next_id().unwrap();
    tx.commit().unwrap();
    id
}

#[test]
fn xid_ids_inside_the_window_above_the_mark() {
    let db = Connection::open_in_memory().unwrap();
    let clock = Clock::at(S * 1000 + 500);
    let s = store(&db, Kind::Xid12, &clock);
    grant(
        &db,
        Kind::Xid12,
        0xc0_0001,
        S * 1_000_000,
        (S + 10) * 1_000_000,
    );
    let mut last = None;
    for i in 0..50 {
        clock.set(S * 1000 + i * 100);
        let id = s.next_id().unwrap().xid().unwrap();
        assert_eq!(id.machine(), [0xc0, 0x00, 0x01]);
        assert_eq!(i64::from(id.unix_seconds()), S + i / 10);
        assert!(Some(id) > last);
        last = Some(id);
    }
    let g = s.grant().unwrap().unwrap();
    assert_eq!(g.last_id, last.map(EdgeId::Xid));
    assert_eq!(g.last_id_us, Some((S + 4) * 1_000_000));
    let (kind, text): (String, String) = db
        .query_row(
            "SELECT typeof(last_id), last_id FROM pg_idgen_edge WHERE kind = 'xid12'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(kind, "text");
    assert_eq!(text, last.unwrap().to_string());
    assert_eq!(text.len(), 20);
}

#[test]
fn snowflake_ids_inside_the_window_above_the_mark() {
    let db = Connection::open_in_memory().unwrap();
    let now = S * 1000;
    let clock = Clock::at(now);
    let s = store(&db, Kind::Snowflake, &clock);
    grant(&db, Kind::Snowflake, 800, now * 1000, (now + 1000) * 1000);
    let a = s.next_id().unwrap().snowflake().unwrap();
    let b = s.next_id().unwrap().snowflake().unwrap();
    assert_eq!(b, a + 1);
    assert_eq!(idgen_core::snowflake::worker(a), Ok(800));
    assert_eq!(idgen_core::snowflake::unix_ms(a, EPOCH), Ok(now));
    let (kind, v, us): (String, i64, i64) = db
        .query_row(
            "SELECT typeof(last_id), last_id, last_id_us FROM pg_idgen_edge",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((kind.as_str(), v, us), ("integer", b, now * 1000));
    // Used up: the window's last millisecond, 4096 ids.
    grant(&db, Kind::Snowflake, 800, now * 1000, (now + 1) * 1000);
    for _ in 0..4096 {
        s.next_id().unwrap();
    }
    let e = s.next_id().unwrap_err();
    assert!(
        matches!(e, Error::EdgeWindowEnded { used_up: true, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("are used up"), "{e}");
}

#[test]
fn persists_across_reopening_and_a_crash_before_commit_loses_nothing_committed() {
    for kind in [Kind::Xid12, Kind::Snowflake] {
        let path = temp_path(kind.sql());
        let clock = Clock::at(S * 1000);
        let committed;
        {
            let db = Connection::open(&path).unwrap();
            db.execute_batch("CREATE TABLE notes (id text PRIMARY KEY)")
                .unwrap();
            let s = store(&db, kind, &clock);
            grant(&db, kind, 900, S * 1_000_000, S * 1_000_000 + DAY_US);
            for _ in 0..3 {
                let tx = db.unchecked_transaction().unwrap();
                let id = s.next_id().unwrap();
                tx.execute("INSERT INTO notes VALUES (?1)", [id.to_string()])
                    .unwrap();
                tx.commit().unwrap();
            }
            committed = s.grant().unwrap().unwrap().last_id.unwrap();
            // A crash before the commit: the id, its row and its mark are lost together.
            let tx = db.unchecked_transaction().unwrap();
            let lost = s.next_id().unwrap();
            assert!(lost > committed);
            tx.execute("INSERT INTO notes VALUES (?1)", [lost.to_string()])
                .unwrap();
            drop(tx); // rolled back
        }
        let db = Connection::open(&path).unwrap();
        let s = store(&db, kind, &clock);
        let g = s.grant().unwrap().unwrap();
        assert_eq!(g.last_id, Some(committed));
        let n: i64 = db
            .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3);
        // The same clock reading after the restart: still above every committed id.
        let next = commit_one(&db, &s);
        assert!(next > committed, "{next} after {committed}");
        drop(s);
        drop(db);
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn refusals_name_the_clock_and_the_window() {
    let db = Connection::open_in_memory().unwrap();
    let clock = Clock::at(S * 1000);
    let s = store(&db, Kind::Xid12, &clock);
    let e = s.next_id().unwrap_err();
    assert!(matches!(e, Error::Edge { .. }), "{e}");
    assert!(e.to_string().contains("holds no xid12 grant"), "{e}");
    assert!(e.to_string().contains("test-device"), "{e}");

    grant(&db, Kind::Xid12, 1, S * 1_000_000, (S + 60) * 1_000_000);
    // An RTC reset to 2000.
    clock.set(946_684_800_000);
    let e = s.next_id().unwrap_err();
    assert!(matches!(e, Error::EdgeClockBeforeWindow { .. }), "{e}");
    let text = e.to_string();
    assert!(text.contains("2000-01-01 00:00:00.000 UTC"), "{text}");
    assert!(text.contains("2027-01-15 08:00:00.000 UTC"), "{text}");
    assert!(text.contains("2027-01-15 08:01:00.000 UTC"), "{text}");
    assert!(text.contains("before the window of grant 7"), "{text}");
    // At the window's end.
    clock.set((S + 60) * 1000);
    let e = s.next_id().unwrap_err();
    assert!(
        matches!(
            e,
            Error::EdgeWindowEnded {
                used_up: false,
                clock_ms,
                ..
            } if clock_ms == (S + 60) * 1000
        ),
        "{e}"
    );
    assert!(e.to_string().contains("at or after the end"), "{e}");
    // Nothing was written.
    assert_eq!(s.grant().unwrap().unwrap().last_id, None);

    // Cloned: no id, the kept message.
    clock.set(S * 1000);
    db.execute(
        "UPDATE pg_idgen_edge SET cloned = 'grant 7 is used by two devices (DETAIL: x)'",
        [],
    )
    .unwrap();
    let e = s.next_id().unwrap_err();
    assert!(matches!(e, Error::EdgeCloned { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("no id is made: grant 7 is used by two devices"),
        "{e}"
    );
    // A cloned grant does not stop a new enrolment.
    s.check_enrol().unwrap();
    db.execute("UPDATE pg_idgen_edge SET cloned = NULL", [])
        .unwrap();
    // A live grant does.
    let e = s.check_enrol().unwrap_err();
    assert!(e.to_string().contains("already holds grant 7"), "{e}");
    // An ended one does not.
    clock.set((S + 61) * 1000);
    s.check_enrol().unwrap();
    // Inside a SQLite transaction, enrol and sync refuse.
    let tx = db.unchecked_transaction().unwrap();
    let e = s.check_enrol().unwrap_err();
    assert!(e.to_string().contains("inside a transaction"), "{e}");
    drop(tx);
}

#[test]
fn clock_stepping_back_inside_the_window_continues_above_the_mark() {
    let db = Connection::open_in_memory().unwrap();
    let clock = Clock::at((S + 30) * 1000);
    let s = store(&db, Kind::Xid12, &clock);
    grant(&db, Kind::Xid12, 5, S * 1_000_000, (S + 60) * 1_000_000);
    let a = s.next_id().unwrap().xid().unwrap();
    clock.set((S + 10) * 1000);
    let b = s.next_id().unwrap().xid().unwrap();
    assert!(b > a);
    assert_eq!(b.unix_seconds(), a.unix_seconds());
    assert_eq!(b.counter(), (a.counter() + 1) & MAX_COUNTER);
    assert_eq!(b.pid(), a.pid());
    // A used-up counter borrows the next second, up to the window's end.
    db.execute(
        "UPDATE pg_idgen_edge SET last_id = ?1",
        [
            Xid::from_parts(moment((S + 59) * 1_000_000), [0, 0, 5], 1, MAX_COUNTER)
                .unwrap()
                .to_string(),
        ],
    )
    .unwrap();
    let e = s.next_id().unwrap_err();
    assert!(matches!(e, Error::EdgeWindowEnded { used_up: true, .. }));
    db.execute(
        "UPDATE pg_idgen_edge SET last_id = ?1",
        [
            Xid::from_parts(moment((S + 40) * 1_000_000), [0, 0, 5], 1, MAX_COUNTER)
                .unwrap()
                .to_string(),
        ],
    )
    .unwrap();
    let c = s.next_id().unwrap().xid().unwrap();
    assert_eq!(i64::from(c.unix_seconds()), S + 41);
    assert_eq!(c.counter(), 0);

    // Snowflake: the next sequence, then the next millisecond (never a wait).
    let now = S * 1000;
    let clock = Clock::at(now + 500);
    let s = store(&db, Kind::Snowflake, &clock);
    grant(&db, Kind::Snowflake, 1000, now * 1000, (now + 1000) * 1000);
    let a = s.next_id().unwrap().snowflake().unwrap();
    clock.set(now + 100);
    let b = s.next_id().unwrap().snowflake().unwrap();
    assert_eq!(b, a + 1);
    // The last id of worker 1000 in millisecond now + 500: its sequence used up.
    let mark = (now + 500 - EPOCH) << 22 | 1000 << 12 | 4095;
    db.execute(
        "UPDATE pg_idgen_edge SET last_id = ?1 WHERE kind = 'snowflake'",
        [mark],
    )
    .unwrap();
    let c = s.next_id().unwrap().snowflake().unwrap();
    assert_eq!(idgen_core::snowflake::unix_ms(c, EPOCH), Ok(now + 501));
    assert_eq!(idgen_core::snowflake::sequence(c), Ok(0));
    let us: i64 = db
        .query_row(
            "SELECT last_id_us FROM pg_idgen_edge WHERE kind = 'snowflake'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(us, (now + 501) * 1000);
}

#[test]
fn the_mark_is_compare_and_set() {
    // Two stores (two connections) on one file never make the same id.
    let path = temp_path("cas");
    let clock = Clock::at(S * 1000);
    let a_db = Connection::open(&path).unwrap();
    let b_db = Connection::open(&path).unwrap();
    let a = store(&a_db, Kind::Xid12, &clock);
    let b = store(&b_db, Kind::Xid12, &clock);
    grant(&a_db, Kind::Xid12, 3, S * 1_000_000, (S + 60) * 1_000_000);
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        assert!(seen.insert(a.next_id().unwrap()));
        assert!(seen.insert(b.next_id().unwrap()));
    }
    drop((a, b));
    drop((a_db, b_db));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn the_file_layout_is_the_shared_one() {
    // Both statements create the same table.
    let info = |db: &Connection| -> Vec<(String, String, bool, Option<String>, i64)> {
        let mut st = db.prepare("PRAGMA table_info(pg_idgen_edge)").unwrap();
        st.query_map([], |r| {
            Ok((r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect()
    };
    let shared = shared();
    assert_eq!(TABLE_SQL, shared.table, "the table is edge_store.json's");
    assert_eq!(COLUMNS, shared.columns, "the columns are edge_store.json's");
    // A file made with the shared statement (as the Python client makes it) has this
    // client's table.
    let py = Connection::open_in_memory().unwrap();
    py.execute_batch(&shared.table).unwrap();
    let rs = Connection::open_in_memory().unwrap();
    EdgeStore::new(&rs, Kind::Xid12, Some("d")).unwrap();
    assert_eq!(info(&py), info(&rs));
    let names: Vec<String> = info(&rs).into_iter().map(|c| c.0).collect();
    assert_eq!(
        names.join(", "),
        format!("kind, {}", shared.columns),
        "columns and their order"
    );

    // A file Python wrote (its table, its insert, its marks) reads here, and continues.
    let clock = Clock::at(S * 1000);
    py.execute(
        &shared.enrol,
        params![
            "xid12",
            11,
            99,
            0xc0_0002,
            S * 1_000_000,
            (S + 60) * 1_000_000,
            None::<i64>,
            "py"
        ],
    )
    .unwrap();
    let mark = Xid::from_parts(moment(S * 1_000_000), [0xc0, 0, 2], 42, 1000).unwrap();
    py.execute(
        "UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ? WHERE kind = ?",
        params![mark.to_string(), S * 1_000_000, "xid12"],
    )
    .unwrap();
    let s = store(&py, Kind::Xid12, &clock);
    let g = s.grant().unwrap().unwrap();
    assert_eq!(
        (g.grant_id, g.slot, g.writer.as_str(), g.syncs, g.epoch_ms),
        (11, 0xc0_0002, "py", 0, None)
    );
    assert_eq!(g.last_id, Some(EdgeId::Xid(mark)));
    let next = s.next_id().unwrap().xid().unwrap();
    assert_eq!((next.pid(), next.counter()), (42, 1001));

    // And a file written here reads with Python's SELECT, as Python expects its values.
    let rs_clock = Clock::at(S * 1000 + 2);
    let s = store(&rs, Kind::Snowflake, &rs_clock);
    grant(
        &rs,
        Kind::Snowflake,
        768,
        S * 1_000_000,
        (S + 60) * 1_000_000,
    );
    let id = s.next_id().unwrap().snowflake().unwrap();
    let row: Vec<String> = rs
        .query_row(
            &format!(
                "SELECT {} FROM pg_idgen_edge WHERE kind = ?",
                shared
                    .columns
                    .split(", ")
                    .map(|c| format!("typeof({c})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            ["snowflake"],
            |r| (0..11).map(|i| r.get(i)).collect(),
        )
        .unwrap();
    assert_eq!(
        row,
        [
            "integer", "integer", "integer", "integer", "integer", "integer", "text", "integer",
            "integer", "integer", "null"
        ]
    );
    let (last, last_us): (i64, i64) = rs
        .query_row(
            "SELECT last_id, last_id_us FROM pg_idgen_edge WHERE kind = 'snowflake'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((last, last_us), (id, (S * 1000 + 2) * 1000));
}

#[test]
fn a_release_never_ends_the_window_below_an_id_made_meanwhile() {
    // Another connection to the file makes an id after this one read the row for a
    // release: the end is computed again from the new mark, never below the new id.
    let db = Connection::open_in_memory().unwrap();
    let clock = Clock::at(S * 1000);
    let s = store(&db, Kind::Snowflake, &clock);
    grant(
        &db,
        Kind::Snowflake,
        800,
        S * 1_000_000,
        (S + 60) * 1_000_000,
    );
    commit_one(&db, &s);
    let stale = s.row().unwrap().unwrap();
    clock.set(S * 1000 + 5_000);
    commit_one(&db, &s);
    let released = s.end_for_release(stale).unwrap();
    let g = s.grant().unwrap().unwrap();
    assert_eq!(released.last_id_us, Some((S * 1000 + 5_000) * 1000));
    assert_eq!(g.hi_us, (S * 1000 + 5_001) * 1000);
}

#[test]
fn system_clock_and_default_device() {
    let db = Connection::open_in_memory().unwrap();
    let s = EdgeStore::new(&db, Kind::Xid12, None).unwrap();
    assert!(!s.device().is_empty());
    assert_eq!(s.device(), default_device());
    let now_us = system_us();
    grant(
        &db,
        Kind::Xid12,
        9,
        now_us - 60_000_000,
        now_us + 3_600_000_000,
    );
    let a = s.next_id().unwrap();
    let b = s.next_id().unwrap();
    assert!(b > a);
}

#[test]
fn a_mark_of_the_wrong_type_is_an_error_not_a_guess() {
    let db = Connection::open_in_memory().unwrap();
    let clock = Clock::at(S * 1000);
    let s = store(&db, Kind::Snowflake, &clock);
    grant(
        &db,
        Kind::Snowflake,
        800,
        S * 1_000_000,
        (S + 1) * 1_000_000,
    );
    db.execute("UPDATE pg_idgen_edge SET last_id = 'abc'", [])
        .unwrap();
    let e = s.next_id().unwrap_err();
    assert!(e.to_string().contains("not a Snowflake id"), "{e}");
}

/// tests/vectors/edge_traces.json through this store: the row written as the file keeps it,
/// the clock and the xid12 seed injected, each id and refusal as the file says.
#[test]
fn the_shared_edge_traces() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/edge_traces.json"
    );
    let text = std::fs::read_to_string(path).expect("tests/vectors/edge_traces.json");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let unhex = |h: &str| -> Xid {
        let bytes: Vec<u8> = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
            .collect();
        Xid::try_from(bytes.as_slice()).unwrap()
    };
    let hex = |x: Xid| -> String { x.as_bytes().iter().map(|b| format!("{b:02x}")).collect() };
    let mut steps_run = 0;
    for case in doc["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let kind = match case["kind"].as_str().unwrap() {
            "xid12" => Kind::Xid12,
            _ => Kind::Snowflake,
        };
        let st = &case["state"];
        let db = Connection::open_in_memory().unwrap();
        let now = Arc::new(AtomicI64::new(0));
        let clock = now.clone();
        let mut s = EdgeStore::new(&db, kind, Some("vectors"))
            .unwrap()
            .clock_us(move || clock.load(Ordering::SeqCst));
        if kind == Kind::Xid12 {
            s = s.xid_seed(XidSeed {
                pid: case["pid"].as_u64().unwrap() as u16,
                counter: case["counter"].as_u64().unwrap() as u32,
            });
        }
        db.execute(
            &shared().enrol,
            params![
                kind.sql(),
                7,
                99,
                st["slot"].as_i64(),
                st["lo_us"].as_i64(),
                st["hi_us"].as_i64(),
                st["epoch_ms"].as_i64(),
                "w"
            ],
        )
        .unwrap();
        let last: Value = match &st["last_id"] {
            serde_json::Value::String(h) => Value::Text(unhex(h).to_string()),
            serde_json::Value::Number(n) => Value::Integer(n.as_i64().unwrap()),
            _ => Value::Null,
        };
        db.execute(
            "UPDATE pg_idgen_edge SET last_id = ?1, last_id_us = ?2, cloned = ?3",
            params![last, st["last_id_us"].as_i64(), st["cloned"].as_str()],
        )
        .unwrap();
        for (n, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            steps_run += 1;
            let expect = &step["expect"];
            if let Some(h) = step["renew"]["hi_us"].as_i64() {
                db.execute("UPDATE pg_idgen_edge SET hi_us = ?1", [h])
                    .unwrap();
                continue;
            }
            let before = s.grant().unwrap().unwrap();
            if step["release"] == true {
                s.end_for_release(s.row().unwrap().unwrap()).unwrap();
                let g = s.grant().unwrap().unwrap();
                assert_eq!(Some(g.hi_us), expect["hi_us"].as_i64(), "{name}, step {n}");
                continue;
            }
            now.store(step["now_us"].as_i64().unwrap(), Ordering::SeqCst);
            match (s.next_id(), expect["refused"].as_str()) {
                (Ok(id), None) => {
                    let got = match id {
                        EdgeId::Xid(x) => serde_json::Value::from(hex(x)),
                        EdgeId::Snowflake(v) => serde_json::Value::from(v),
                    };
                    assert_eq!(got, expect["id"], "{name}, step {n}");
                    let g = s.grant().unwrap().unwrap();
                    assert_eq!(g.last_id, Some(id), "{name}, step {n}: the mark");
                    assert_eq!(
                        g.last_id_us,
                        expect["last_id_us"].as_i64(),
                        "{name}, step {n}"
                    );
                    assert!(
                        before.last_id < Some(id),
                        "{name}, step {n}: above the mark"
                    );
                }
                (Err(e), Some(want)) => {
                    let got = match e {
                        Error::EdgeCloned { .. } => "cloned",
                        Error::EdgeClockBeforeWindow { .. } => "clock_before_window",
                        Error::EdgeWindowEnded { used_up: false, .. } => "window_ended",
                        Error::EdgeWindowEnded { used_up: true, .. } => "used_up",
                        other => panic!("{name}, step {n}: {other}"),
                    };
                    assert_eq!(got, want, "{name}, step {n}");
                    assert_eq!(
                        s.grant().unwrap().unwrap(),
                        before,
                        "{name}, step {n}: unchanged"
                    );
                }
                (got, want) => panic!("{name}, step {n}: got {got:?}, want {want:?}"),
            }
        }
    }
    assert!(steps_run >= 70, "{steps_run} steps");
}
