//! The client crate against the built-ins a Rust user would compare it with, measured in the
//! same run: `FromSql` for `Xid` against `uuid::Uuid`'s (target: at most 1.0x), and
//! `Xid::new()` against `uuid::Uuid::new_v4()`, and generators bound to a writer grant against
//! the plain ones (target: at most 1.1x per id). Prints nanoseconds per call and ratios; no
//! assertions (machines are noisy).
//!
//!   cargo bench -p pg-idgen-client --features postgres
//!
//! The grant-bound generators of `registry` need a server: with PG_IDGEN_HOST (socket
//! directory) and PG_IDGEN_PORT set, they are measured through a real grant in a database
//! `rust_client_bench` (made afresh); without, only the core's state machines are compared.

use idgen_core::grant::{GrantStep, SnowflakeGrant, Window, XidGrant};
use idgen_core::snowflake::{Config, SnowflakeState, Step};
use pg_idgen_client::registry::Registry;
use pg_idgen_client::{Snowflake, Xid, XidGenerator};
use postgres_types::{FromSql, Kind, Type};
use std::hint::black_box;
use std::time::Instant;

/// One timing of `n` calls, in ns per call.
fn time_ns(n: u64, f: &mut impl FnMut(u64)) -> f64 {
    let start = Instant::now();
    for i in 0..n {
        f(i);
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

/// The best of `rounds` timings of `n` calls, in ns per call.
fn best_ns(rounds: usize, n: u64, mut f: impl FnMut(u64)) -> f64 {
    (0..rounds)
        .map(|_| time_ns(n, &mut f))
        .fold(f64::INFINITY, f64::min)
}

/// The best of `rounds` timings of each of `a` and `b`, taken in turns so that both see the
/// same load on a shared machine.
fn best_pair_ns(
    rounds: usize,
    n: u64,
    mut a: impl FnMut(u64),
    mut b: impl FnMut(u64),
) -> (f64, f64) {
    (0..rounds).fold((f64::INFINITY, f64::INFINITY), |(ba, bb), _| {
        (ba.min(time_ns(n, &mut a)), bb.min(time_ns(n, &mut b)))
    })
}

fn main() {
    // Many short rounds, best of each: on a loaded machine some rounds run undisturbed.
    let rounds = 41;
    let xid12 = Type::new("xid12".into(), 16_500, Kind::Simple, "public".into());
    let uuid_type = Type::UUID;
    let xid_bytes: Vec<[u8; 12]> = (0..1024).map(|_| *Xid::new().as_bytes()).collect();
    let uuid_bytes: Vec<[u8; 16]> = (0..1024)
        .map(|_| *uuid::Uuid::new_v4().as_bytes())
        .collect();

    let n = 1_000_000;
    let (xid_ns, uuid_ns) = best_pair_ns(
        rounds,
        n,
        |i| {
            let raw = black_box(&xid_bytes[(i & 1023) as usize][..]);
            black_box(Xid::from_sql(black_box(&xid12), raw).unwrap());
        },
        |i| {
            let raw = black_box(&uuid_bytes[(i & 1023) as usize][..]);
            black_box(uuid::Uuid::from_sql(black_box(&uuid_type), raw).unwrap());
        },
    );
    println!("FromSql, one value:   Xid {xid_ns:6.2} ns   uuid::Uuid {uuid_ns:6.2} ns   ratio {:.2}x (target <= 1.0x)", xid_ns / uuid_ns);

    // A 1000-element array, as `Vec<Xid>` against `Vec<Uuid>`: the driver's array walk plus
    // 1000 element conversions.
    let array = |oid: u32, elems: &[&[u8]]| {
        let mut out = Vec::new();
        out.extend_from_slice(&1i32.to_be_bytes()); // dimensions
        out.extend_from_slice(&0i32.to_be_bytes()); // no NULLs
        out.extend_from_slice(&oid.to_be_bytes());
        out.extend_from_slice(&(elems.len() as i32).to_be_bytes());
        out.extend_from_slice(&1i32.to_be_bytes()); // lower bound
        for e in elems {
            out.extend_from_slice(&(e.len() as i32).to_be_bytes());
            out.extend_from_slice(e);
        }
        out
    };
    let xid_elems: Vec<&[u8]> = xid_bytes.iter().take(1000).map(|b| &b[..]).collect();
    let uuid_elems: Vec<&[u8]> = uuid_bytes.iter().take(1000).map(|b| &b[..]).collect();
    let xid_array = array(16_500, &xid_elems);
    let uuid_array = array(Type::UUID.oid(), &uuid_elems);
    let xid_array_type = Type::new(
        "_xid12".into(),
        16_501,
        Kind::Array(xid12.clone()),
        "public".into(),
    );
    let n = 1_000;
    let (xid_arr_ns, uuid_arr_ns) = best_pair_ns(
        rounds,
        n,
        |_| {
            black_box(
                Vec::<Xid>::from_sql(black_box(&xid_array_type), black_box(&xid_array)).unwrap(),
            );
        },
        |_| {
            black_box(
                Vec::<uuid::Uuid>::from_sql(black_box(&Type::UUID_ARRAY), black_box(&uuid_array))
                    .unwrap(),
            );
        },
    );
    println!(
        "FromSql, 1000-array:  Vec<Xid> {:6.2} us   Vec<Uuid> {:6.2} us   ratio {:.2}x",
        xid_arr_ns / 1000.0,
        uuid_arr_ns / 1000.0,
        xid_arr_ns / uuid_arr_ns
    );

    let n = 200_000;
    let (new_ns, v4_ns) = best_pair_ns(
        rounds,
        n,
        |_| {
            black_box(Xid::new());
        },
        |_| {
            black_box(uuid::Uuid::new_v4());
        },
    );
    let g = XidGenerator::with_machine([1, 2, 3]);
    let gen_ns = best_ns(rounds, n, |_| {
        black_box(g.next_id().unwrap());
    });
    println!("generate:             Xid::new() {new_ns:6.2} ns   XidGenerator::next_id {gen_ns:6.2} ns   Uuid::new_v4() {v4_ns:6.2} ns   ratio Xid::new()/new_v4 {:.2}x", new_ns / v4_ns);
    // Snowflake: at most 4096 ids per millisecond by design, so its rate is bounded.
    let s = Snowflake::new(1).unwrap();
    let n = 200_000;
    let sf_ns = best_ns(3, n, |_| {
        black_box(s.next_id().unwrap());
    });
    println!("generate:             Snowflake::next_id {sf_ns:6.2} ns (the layout allows at most 4096 per ms, 244 ns each)");

    grants(rounds);
}

/// Grant-bound against plain, per id: the core's state machines always; the client's
/// generators when a server is given.
fn grants(rounds: usize) {
    // Snowflake ids are bounded by 4096 per ms; a fake clock that moves on every 4096 calls
    // measures the generators, not the clock.
    let n = 200_000;
    let cfg = Config {
        worker: 7,
        ..Config::default()
    };
    let epoch = cfg.epoch_ms;
    let start = 1_700_000_000_000i64;
    let mut plain = SnowflakeState::new();
    let mut bound = SnowflakeGrant::new(epoch, 7, Window::new(0, i64::MAX >> 22), 5000).unwrap();
    let (mut tp, mut tb) = (start, start);
    let (plain_ns, bound_ns) = best_pair_ns(
        rounds,
        n,
        |i| {
            if i % 4096 == 0 {
                tp += 1;
            }
            match plain.next(black_box(tp), &cfg) {
                Ok(Step::Issued(id)) => {
                    black_box(id);
                }
                other => panic!("{other:?}"),
            }
        },
        |i| {
            if i % 4096 == 0 {
                tb += 1;
            }
            match bound.next(black_box(tb)) {
                Ok(GrantStep::Issued(id)) => {
                    black_box(id);
                }
                other => panic!("{other:?}"),
            }
        },
    );
    println!("core, Snowflake:      SnowflakeState::next {plain_ns:6.2} ns   SnowflakeGrant::next {bound_ns:6.2} ns   ratio {:.2}x (target <= 1.1x)", bound_ns / plain_ns);

    let mut plain = idgen_core::xid::Generator::new();
    let mut bound = XidGrant::new(0x010203, Window::new(0, 1 << 32), 5).unwrap();
    let (plain_ns, bound_ns) = best_pair_ns(
        rounds,
        n,
        |i| {
            black_box(
                plain
                    .next(black_box(1_700_000_000), [1, 2, 3], 1, i as u32 & 0xff_ffff)
                    .unwrap(),
            );
        },
        |i| match bound.next(black_box(1_700_000_000), 1, i as u32 & 0xff_ffff) {
            Ok(GrantStep::Issued(id)) => {
                black_box(id);
            }
            other => panic!("{other:?}"),
        },
    );
    println!("core, xid12:          xid::Generator::next {plain_ns:6.2} ns   XidGrant::next {bound_ns:6.2} ns   ratio {:.2}x (target <= 1.1x)", bound_ns / plain_ns);

    let (Ok(host), Ok(port)) = (
        std::env::var("PG_IDGEN_HOST"),
        std::env::var("PG_IDGEN_PORT"),
    ) else {
        println!("client, grant-bound:  skipped (set PG_IDGEN_HOST and PG_IDGEN_PORT of a server with pg_idgen)");
        return;
    };
    let port: u16 = port.parse().expect("PG_IDGEN_PORT is a port");
    let connect = move |db: &str| {
        postgres::Config::new()
            .host_path(&host)
            .port(port)
            .user("postgres")
            .dbname(db)
            .connect(postgres::NoTls)
    };
    let mut admin = connect("postgres").unwrap();
    for statement in [
        "DROP DATABASE IF EXISTS rust_client_bench WITH (FORCE)",
        "CREATE DATABASE rust_client_bench",
    ] {
        admin.batch_execute(statement).unwrap();
    }
    connect("rust_client_bench")
        .unwrap()
        .batch_execute("CREATE EXTENSION pg_idgen")
        .unwrap();
    let registry = Registry::new(move || connect("rust_client_bench")).writer("bench");
    let granted = registry
        .snowflake(std::time::Duration::from_secs(600))
        .unwrap();
    let s = Snowflake::new(i64::from(granted.worker())).unwrap();
    // The system clock: both are bounded by 4096 ids per ms, so fewer ids per round.
    let n = 20_000;
    let (plain_ns, bound_ns) = best_pair_ns(
        rounds,
        n,
        |_| {
            black_box(s.next_id().unwrap());
        },
        |_| {
            black_box(granted.next_id().unwrap());
        },
    );
    println!("client, Snowflake:    Snowflake::next_id {plain_ns:6.2} ns   GrantedSnowflake::next_id {bound_ns:6.2} ns   ratio {:.2}x (target <= 1.1x)", bound_ns / plain_ns);
    let xg = XidGenerator::with_machine([1, 2, 3]);
    let gx = registry.xid12(std::time::Duration::from_secs(600)).unwrap();
    let n = 200_000;
    let (plain_ns, bound_ns) = best_pair_ns(
        rounds,
        n,
        |_| {
            black_box(xg.next_id().unwrap());
        },
        |_| {
            black_box(gx.next_id().unwrap());
        },
    );
    println!("client, xid12:        XidGenerator::next_id {plain_ns:6.2} ns   GrantedXid::next_id {bound_ns:6.2} ns   ratio {:.2}x (target <= 1.1x)", bound_ns / plain_ns);
    registry.close().unwrap();
}
