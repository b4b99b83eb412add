//! Against a real server, in binary mode, with both drivers: the `postgres` crate and sqlx.
//! scripts/test.sh sets PG_IDGEN_HOST (the socket directory) and PG_IDGEN_PORT of its
//! preloaded test cluster. The tests are `#[ignore]`d (a run without a server reports them
//! ignored); scripts/test.sh runs them with `--include-ignored`.
#![cfg(all(feature = "postgres", feature = "sqlx"))]

use pg_idgen_client::{rapkey, snowflake, Snowflake, Xid, XidGenerator};
use std::time::{Duration, UNIX_EPOCH};

mod common;
use common::{connect, server};

/// A fresh database with the extension in schema `ids`, and a table keyed by xid12.
fn fresh_database(host: &str, port: u16, name: &str) {
    common::fresh_database(host, port, name)
        .batch_execute("CREATE TABLE t (id ids.xid12 PRIMARY KEY, n int);")
        .unwrap();
}

/// rs/xid's vectors and the extremes.
fn sample_ids() -> Vec<Xid> {
    [
        "9m4e2mr0ui3e8a215n4g",
        "00000000000000000000",
        "0000005anf6drrg0000g",
        "vvvvvvvvvvvvvvvvvvvg",
    ]
    .iter()
    .map(|t| t.parse().unwrap())
    .collect()
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn postgres_crate() {
    let (host, port) = server();
    fresh_database(&host, port, "rust_client_postgres");
    let mut c = connect(&host, port, "rust_client_postgres");
    let mut ids = sample_ids();
    ids.extend((0..3).map(|_| Xid::new()));

    // The type is found by its name in any schema: the extension's schema is not on the
    // search_path yet.
    let row = c
        .query_one(
            "SELECT g, g::bytea, $1::ids.xid12 FROM ids.gen_xid12() g",
            &[&ids[0]],
        )
        .unwrap();
    let (made, made_bytes, echoed): (Xid, Vec<u8>, Xid) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(made.as_bytes(), &made_bytes[..]);
    assert_eq!(echoed, ids[0]);
    // Its operators are not found without the schema: that is PostgreSQL's rule.
    c.batch_execute("SET search_path = public, ids").unwrap();

    // Bind: the server stores exactly the bytes and shows exactly the text.
    for (n, id) in ids.iter().enumerate() {
        c.execute("INSERT INTO t (id, n) VALUES ($1, $2)", &[id, &(n as i32)])
            .unwrap();
    }
    for (n, id) in ids.iter().enumerate() {
        let row = c
            .query_one(
                "SELECT id, id::text, id::bytea FROM t WHERE n = $1",
                &[&(n as i32)],
            )
            .unwrap();
        let read: Xid = row.get(0);
        let text: String = row.get(1);
        let bytes: Vec<u8> = row.get(2);
        assert_eq!(read, *id);
        assert_eq!(text, id.to_string());
        assert_eq!(bytes, id.as_bytes());
        let found: i32 = c
            .query_one("SELECT n FROM t WHERE id = $1", &[id])
            .unwrap()
            .get(0);
        assert_eq!(found, n as i32);
    }

    // Arrays both ways, and id = ANY($1).
    let mut sorted = ids.clone();
    sorted.sort();
    let all: Vec<Xid> = c
        .query_one("SELECT array_agg(id ORDER BY id) FROM t", &[])
        .unwrap()
        .get(0);
    assert_eq!(all, sorted);
    let wanted = vec![ids[0], ids[3], ids[5]];
    let rows = c
        .query("SELECT n FROM t WHERE id = ANY($1) ORDER BY n", &[&wanted])
        .unwrap();
    assert_eq!(
        rows.iter().map(|r| r.get::<_, i32>(0)).collect::<Vec<_>>(),
        [0, 3, 5]
    );
    let echoed: Vec<Xid> = c
        .query_one("SELECT $1::ids.xid12[]", &[&&wanted[..]])
        .unwrap()
        .get(0);
    assert_eq!(echoed, wanted);
    let with_null: Vec<Option<Xid>> = c
        .query_one("SELECT ARRAY[$1, NULL]::ids.xid12[]", &[&ids[0]])
        .unwrap()
        .get(0);
    assert_eq!(with_null, [Some(ids[0]), None]);

    // NULL both ways.
    let none: Option<Xid> = c
        .query_one("SELECT $1::ids.xid12", &[&None::<Xid>])
        .unwrap()
        .get(0);
    assert_eq!(none, None);

    // Server-made ids read back with their parts.
    let row = c
        .query_one(
            "SELECT g, ids.xid12_time(g)::text, ids.xid12_machine(g), ids.xid12_pid(g), ids.xid12_counter(g)
             FROM ids.gen_xid12() g",
            &[],
        )
        .unwrap();
    let made: Xid = row.get(0);
    let machine: Vec<u8> = row.get(2);
    assert_eq!(machine, made.machine());
    assert_eq!(row.get::<_, i32>(3), i32::from(made.pid()));
    assert_eq!(row.get::<_, i32>(4), made.counter() as i32);
    let lo = Xid::min_for(made.time()).unwrap();
    let server_lo: Xid = c
        .query_one("SELECT ids.xid12_min(ids.xid12_time($1))", &[&made])
        .unwrap()
        .get(0);
    assert_eq!(server_lo, lo);

    // Binary COPY of ids made in the application, then read back.
    let xid12 = c.prepare("SELECT $1::ids.xid12").unwrap().params()[0].clone();
    let int4 = postgres_types::Type::INT4;
    let g = XidGenerator::with_machine([7, 7, 7]);
    let copied: Vec<Xid> = (0..1000).map(|_| g.next_id().unwrap()).collect();
    let sink = c
        .copy_in("COPY t (id, n) FROM STDIN (FORMAT binary)")
        .unwrap();
    let mut writer = postgres::binary_copy::BinaryCopyInWriter::new(sink, &[xid12, int4]);
    for (k, id) in copied.iter().enumerate() {
        writer.write(&[id, &(1000 + k as i32)]).unwrap();
    }
    writer.finish().unwrap();
    let back: Vec<Xid> = c
        .query_one(
            "SELECT array_agg(id ORDER BY n) FROM t WHERE ids.xid12_machine(id) = '\\x070707'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(back, copied);

    // Another type is refused with the driver's type error, not read as an id.
    let err = c
        .query_one("SELECT '\\x00'::bytea", &[])
        .unwrap()
        .try_get::<_, Xid>(0)
        .unwrap_err();
    let why = format!("{err:?}");
    assert!(why.contains("WrongType") && why.contains("Xid"), "{why}");
    let err = c.query_one("SELECT $1::bytea", &[&ids[0]]).unwrap_err();
    let why = format!("{err:?}");
    assert!(why.contains("WrongType") && why.contains("Bytea"), "{why}");
    // A text parameter takes the id's text (the portable edition's xid12 is text on the wire).
    let text: String = c.query_one("SELECT $1::text", &[&ids[0]]).unwrap().get(0);
    assert_eq!(text, ids[0].to_string());
}

#[test]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
fn generators_merge_with_the_servers() {
    let (host, port) = server();
    fresh_database(&host, port, "rust_client_merge");
    let mut c = connect(&host, port, "rust_client_merge");
    let epoch: String = c
        .query_one("SELECT current_setting('pg_idgen.snowflake_epoch')", &[])
        .unwrap()
        .get(0);
    assert_eq!(epoch, snowflake::DEFAULT_EPOCH_MS.to_string());

    // Snowflake ids of worker 9 decode on the server to their worker, sequence and time.
    let g = Snowflake::new(9).unwrap();
    let ids: Vec<i64> = (0..5000).map(|_| g.next_id().unwrap()).collect();
    c.batch_execute("CREATE TABLE s (id bigint PRIMARY KEY)")
        .unwrap();
    c.execute("INSERT INTO s SELECT unnest($1::bigint[])", &[&ids])
        .unwrap();
    let rows = c
        .query(
            "SELECT id, ids.snowflake_worker(id), ids.snowflake_sequence(id),
                    (extract(epoch FROM ids.snowflake_time(id)) * 1000)::bigint
             FROM s ORDER BY id",
            &[],
        )
        .unwrap();
    assert_eq!(rows.len(), ids.len());
    for (row, id) in rows.iter().zip(&ids) {
        assert_eq!(row.get::<_, i64>(0), *id);
        assert_eq!(row.get::<_, i32>(1), 9);
        assert_eq!(
            row.get::<_, i32>(2),
            i32::from(snowflake::sequence(*id).unwrap())
        );
        let ms = snowflake::unix_ms(*id, snowflake::DEFAULT_EPOCH_MS).unwrap();
        assert_eq!(row.get::<_, i64>(3), ms);
        assert_eq!(
            snowflake::time(*id, snowflake::DEFAULT_EPOCH_MS).unwrap(),
            UNIX_EPOCH + Duration::from_millis(ms as u64)
        );
    }

    // rapkeys: the same check characters, keys and prefix ranges as the server's.
    for parts in [
        vec!["ord", "cn", "sh", "202407", "8842"],
        vec!["usr", "cn", "10001"],
        vec!["pay", "us", "ca", "acme", "202406", "3311"],
        vec!["ord", "cn", "sh", "202407", "58"],
        vec!["ab", "0"],
    ] {
        let key = rapkey::build(parts[0], &parts[1..]).unwrap();
        let row = c
            .query_one(
                "SELECT ids.rapkey_build($1, VARIADIC $2)::text, ids.rapkey_prefix_lo($3), ids.rapkey_prefix_hi($3)",
                &[&parts[0], &&parts[1..], &parts[..2].join(".")],
            )
            .unwrap();
        assert_eq!(row.get::<_, String>(0), key);
        let (lo, hi) = rapkey::prefix_range(&parts[..2].join(".")).unwrap();
        assert_eq!((row.get::<_, String>(1), row.get::<_, String>(2)), (lo, hi));
    }
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "needs the test cluster (scripts/test.sh: --include-ignored)"]
async fn sqlx_driver() {
    use sqlx::postgres::PgConnectOptions;
    use sqlx::{Connection, Row};
    let (host, port) = server();
    let name = "rust_client_sqlx";
    std::thread::spawn({
        let host = host.clone();
        move || fresh_database(&host, port, name)
    })
    .join()
    .unwrap();
    let options = PgConnectOptions::new()
        .socket(&host)
        .port(port)
        .username("postgres")
        .database(name);
    // Binding needs the type's name on the search_path; reading does not.
    let mut c =
        sqlx::PgConnection::connect_with(&options.clone().options([("search_path", "public,ids")]))
            .await
            .unwrap();
    let mut ids = sample_ids();
    ids.push(Xid::new());

    for (n, id) in ids.iter().enumerate() {
        sqlx::query("INSERT INTO t (id, n) VALUES ($1, $2)")
            .bind(id)
            .bind(n as i32)
            .execute(&mut c)
            .await
            .unwrap();
    }
    for (n, id) in ids.iter().enumerate() {
        let row = sqlx::query("SELECT id, id::text, id::bytea FROM t WHERE n = $1")
            .bind(n as i32)
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(row.get::<Xid, _>(0), *id);
        assert_eq!(row.get::<String, _>(1), id.to_string());
        assert_eq!(row.get::<Vec<u8>, _>(2), id.as_bytes());
        let (found,): (i32,) = sqlx::query_as("SELECT n FROM t WHERE id = $1")
            .bind(id)
            .fetch_one(&mut c)
            .await
            .unwrap();
        assert_eq!(found, n as i32);
    }

    let mut sorted = ids.clone();
    sorted.sort();
    let (all,): (Vec<Xid>,) = sqlx::query_as("SELECT array_agg(id ORDER BY id) FROM t")
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(all, sorted);
    let wanted = vec![ids[1], ids[4]];
    let found: Vec<i32> = sqlx::query_scalar("SELECT n FROM t WHERE id = ANY($1) ORDER BY n")
        .bind(&wanted)
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(found, [1, 4]);
    let echoed: Vec<Xid> = sqlx::query_scalar("SELECT $1::xid12[]")
        .bind(&wanted[..])
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(echoed, wanted);
    let none: Option<Xid> = sqlx::query_scalar("SELECT $1::xid12")
        .bind(None::<Xid>)
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(none, None);

    // The simple protocol sends text: decoded by the same rules.
    let rows = sqlx::raw_sql("SELECT id FROM t ORDER BY id")
        .fetch_all(&mut c)
        .await
        .unwrap();
    let texts: Vec<Xid> = rows.iter().map(|r| r.get::<Xid, _>(0)).collect();
    assert_eq!(texts, sorted);

    // Another type is refused, not read as an id.
    let err = sqlx::query_scalar::<_, Xid>("SELECT '\\x00'::bytea")
        .fetch_one(&mut c)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("xid12"), "{err}");

    // Without the extension's schema on the search_path: reading works; binding cannot find
    // the type by name.
    let mut bare = sqlx::PgConnection::connect_with(&options).await.unwrap();
    let (made, made_bytes): (Xid, Vec<u8>) =
        sqlx::query_as("SELECT g, g::bytea FROM ids.gen_xid12() g")
            .fetch_one(&mut bare)
            .await
            .unwrap();
    assert_eq!(made.as_bytes(), &made_bytes[..]);
    let arr: Vec<Xid> = sqlx::query_scalar("SELECT ARRAY[ids.gen_xid12()]")
        .fetch_one(&mut bare)
        .await
        .unwrap();
    assert_eq!(arr.len(), 1);
    let err = sqlx::query("SELECT $1::ids.xid12")
        .bind(ids[0])
        .fetch_one(&mut bare)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("xid12"), "{err}");
}
