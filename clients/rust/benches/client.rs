//! The client crate against the built-ins a Rust user would compare it with, measured in the
//! same run: `FromSql` for `Xid` against `uuid::Uuid`'s (target: at most 1.0x), and
//! `Xid::new()` against `uuid::Uuid::new_v4()`. Prints nanoseconds per call and ratios; no
//! assertions (machines are noisy).
//!
//!   cargo bench -p pg-idgen-client --features postgres

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
}
