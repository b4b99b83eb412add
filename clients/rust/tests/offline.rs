//! Everything that needs no server: rs/xid vectors, parsing, the generators, rapkeys, serde.

use pg_idgen_client::{rapkey, snowflake, Error, Snowflake, Xid, XidGenerator};
use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// rs/xid's own test vectors (id_test.go): bytes, unix second, machine, pid, counter, and the
/// text this codec must give them.
/// (bytes, unix second, machine, pid, counter, text).
type Vector = ([u8; 12], u32, [u8; 3], u16, u32, &'static str);

const VECTORS: [Vector; 4] = [
    (
        [
            0x4d, 0x88, 0xe1, 0x5b, 0x60, 0xf4, 0x86, 0xe4, 0x28, 0x41, 0x2d, 0xc9,
        ],
        1300816219,
        [0x60, 0xf4, 0x86],
        0xe428,
        4271561,
        "9m4e2mr0ui3e8a215n4g",
    ),
    ([0; 12], 0, [0; 3], 0, 0, "00000000000000000000"),
    (
        [
            0x00, 0x00, 0x00, 0x00, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x00, 0x00, 0x01,
        ],
        0,
        [0xaa, 0xbb, 0xcc],
        0xddee,
        1,
        "0000005anf6drrg0000g",
    ),
    (
        [0xff; 12],
        u32::MAX,
        [0xff; 3],
        0xffff,
        0xff_ffff,
        "vvvvvvvvvvvvvvvvvvvg",
    ),
];

#[test]
fn rs_xid_vectors() {
    for (bytes, seconds, machine, pid, counter, text) in VECTORS {
        let id = Xid::from_bytes(bytes);
        assert_eq!(id.to_string(), text);
        assert_eq!(text.parse::<Xid>().unwrap(), id);
        assert_eq!(Xid::parse(&text.to_uppercase()).unwrap(), id);
        assert_eq!(Xid::try_from(&bytes[..]).unwrap(), id);
        assert_eq!(id.as_bytes(), &bytes);
        assert_eq!(id.unix_seconds(), seconds);
        assert_eq!(id.time(), UNIX_EPOCH + Duration::from_secs(seconds.into()));
        assert_eq!(id.machine(), machine);
        assert_eq!(id.pid(), pid);
        assert_eq!(id.counter(), counter);
        let rebuilt = Xid::from_parts(id.time(), machine, pid, counter).unwrap();
        assert_eq!(rebuilt, id);
    }
    assert_eq!(
        format!("{:?}", Xid::from_bytes(VECTORS[0].0)),
        "Xid(9m4e2mr0ui3e8a215n4g)"
    );
    assert_eq!(
        format!("{:>22}", Xid::from_bytes([0; 12])),
        "  00000000000000000000"
    );
}

#[test]
fn order_is_byte_order() {
    let mut ids: Vec<Xid> = VECTORS.iter().map(|v| Xid::from_bytes(v.0)).collect();
    ids.sort();
    let texts: Vec<String> = ids.iter().map(Xid::to_string).collect();
    assert_eq!(
        texts,
        [
            "00000000000000000000",
            "0000005anf6drrg0000g",
            "9m4e2mr0ui3e8a215n4g",
            "vvvvvvvvvvvvvvvvvvvg"
        ]
    );
    let a = Xid::from_bytes([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff]);
    let b = Xid::from_bytes([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    assert!(a < b);
}

#[test]
fn bad_text_is_an_error_that_says_why() {
    let cases = [
        ("", "the text has 0"),
        (
            "9m4e2mr0ui3e8a215n4",
            "An xid12 is 20 base32hex characters; the text has 19 characters.",
        ),
        ("9m4e2mr0ui3e8a215n4g0", "the text has 21"),
        (
            "9m4e2mr0ui3e8a215n4w",
            "Character 20 is outside the base32hex alphabet",
        ),
        (
            "9m4e2mr0ui3e 8a215n4",
            "Character 13 is outside the base32hex alphabet",
        ),
        (" 9m4e2mr0ui3e8a215n4", "Leading and trailing spaces"),
        (
            "9m4e2mr0ui3e8a215n4é",
            "Character 20 is outside the base32hex alphabet",
        ),
        ("9m4e2mr0ui3e8a215n41", "The last character must be 0 or g"),
        ("9m4e2mr0ui3e8a215n4v", "The last character must be 0 or g"),
    ];
    for (text, why) in cases {
        let err = Xid::parse(text).unwrap_err();
        assert!(matches!(err, Error::XidText { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.starts_with("invalid input syntax for type xid12: "),
            "{message}"
        );
        assert!(message.contains(why), "{text:?}: {message}");
    }
    for len in [0, 11, 13, 20] {
        let err = Xid::try_from(&vec![0u8; len][..]).unwrap_err();
        assert_eq!(err, Error::XidBytes { len });
        assert_eq!(
            err.to_string(),
            format!("invalid binary xid12 value: An xid12 is exactly 12 bytes; got {len}.")
        );
    }
}

#[test]
fn bounds_of_a_second_and_parts() {
    let t = UNIX_EPOCH + Duration::from_millis(1_300_816_219_750);
    let lo = Xid::min_for(t).unwrap();
    let hi = Xid::max_for(t).unwrap();
    assert_eq!(lo.to_string(), "9m4e2mo0000000000000");
    assert_eq!(hi.to_string(), "9m4e2mvvvvvvvvvvvvvg");
    let id = Xid::from_bytes(VECTORS[0].0);
    assert!(lo < id && id < hi);
    // Before 1970 and after 2106-02-07 06:28:15 there is no xid12.
    let before = UNIX_EPOCH - Duration::from_millis(1);
    let err = Xid::min_for(before).unwrap_err();
    assert!(
        err.to_string().contains("unix second -1 is outside"),
        "{err}"
    );
    let after = UNIX_EPOCH + Duration::from_secs(1 << 32);
    assert!(Xid::max_for(after).is_err());
    assert!(Xid::max_for(after - Duration::from_secs(1)).is_ok());
    let err = Xid::from_parts(t, [0; 3], 0, 1 << 24).unwrap_err();
    assert_eq!(
        err.to_string(),
        "xid12 counter 16777216 is outside the range 0 .. 16777215"
    );
}

/// A fake clock the test moves.
fn fake_clock(start: i64) -> (Arc<AtomicI64>, impl Fn() -> i64 + Send + Sync + 'static) {
    let now = Arc::new(AtomicI64::new(start));
    let reader = Arc::clone(&now);
    (now, move || reader.load(Ordering::SeqCst))
}

#[test]
fn generator_counter_wrap_and_clock_step_back() {
    let (clock, read) = fake_clock(1_700_000_000);
    let g = XidGenerator::with_machine([1, 2, 3])
        .pid(42)
        .counter_start(0xff_fffe)
        .clock(read);
    let parts = |x: Xid| (x.unix_seconds(), x.counter());
    let a = g.next_id().unwrap();
    let b = g.next_id().unwrap();
    // The counter wraps within the second: the id borrows the next second.
    let c = g.next_id().unwrap();
    assert_eq!(parts(a), (1_700_000_000, 0xff_fffe));
    assert_eq!(parts(b), (1_700_000_000, 0xff_ffff));
    assert_eq!(parts(c), (1_700_000_001, 0));
    // The clock steps back an hour: the last second is kept.
    clock.store(1_700_000_000 - 3600, Ordering::SeqCst);
    let d = g.next_id().unwrap();
    assert_eq!(parts(d), (1_700_000_001, 1));
    clock.store(1_700_000_005, Ordering::SeqCst);
    let e = g.next_id().unwrap();
    assert_eq!(parts(e), (1_700_000_005, 2));
    assert!(a < b && b < c && c < d && d < e);
    for id in [a, b, c, d, e] {
        assert_eq!((id.machine(), id.pid()), ([1, 2, 3], 42));
    }
    // A clock outside the xid12 range is an error, not a wrapped id; the state survives it.
    clock.store(-5, Ordering::SeqCst);
    let f = g.next_id().unwrap();
    assert_eq!(parts(f), (1_700_000_005, 3));
    let g2 = XidGenerator::new().clock(|| -5);
    assert!(matches!(g2.next_id(), Err(Error::XidParts(_))));
}

#[test]
fn process_generator_is_strictly_increasing_across_threads() {
    let threads: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(|| {
                let ids: Vec<Xid> = (0..20_000).map(|_| Xid::new()).collect();
                assert!(ids.windows(2).all(|w| w[0] < w[1]));
                ids
            })
        })
        .collect();
    let mut all = HashSet::new();
    for t in threads {
        for id in t.join().unwrap() {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    let id = Xid::new();
    assert_eq!(id.machine(), pg_idgen_client::default_machine());
    assert_eq!(id.pid(), std::process::id() as u16);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(u64::from(id.unix_seconds()).abs_diff(now) <= 2);
}

#[test]
fn snowflake_layout_and_generator() {
    const E: i64 = snowflake::DEFAULT_EPOCH_MS;
    assert_eq!(E, 1288834974657);
    let (clock, read) = fake_clock(E + 1000);
    let g = Snowflake::new(5).unwrap().max_backward_ms(100).clock(read);
    let first = g.next_id().unwrap();
    assert_eq!(first, 1000 * (1 << 22) + 5 * (1 << 12));
    let second = g.next_id().unwrap();
    assert_eq!(second, first + 1);
    let parts = snowflake::decode(second).unwrap();
    assert_eq!(
        (parts.ms_since_epoch, parts.worker, parts.sequence),
        (1000, 5, 1)
    );
    assert_eq!(snowflake::worker(second).unwrap(), 5);
    assert_eq!(snowflake::sequence(second).unwrap(), 1);
    assert_eq!(
        snowflake::time(second, E).unwrap(),
        UNIX_EPOCH + Duration::from_millis((E + 1000) as u64)
    );
    let at = UNIX_EPOCH + Duration::from_millis((E + 1000) as u64);
    assert_eq!(snowflake::min_id_at(at, E).unwrap(), 1000 << 22);
    assert_eq!(
        snowflake::max_id_at(at, E).unwrap(),
        (1000 << 22) + (1023 << 12) + 4095
    );
    // A clock step back beyond the bound is an error, never a duplicate.
    clock.store(E + 1000 - 500, Ordering::SeqCst);
    let err = g.next_id().unwrap_err();
    assert!(
        err.to_string().contains("clock moved backwards by 500 ms"),
        "{err}"
    );
    // Within the bound it waits until the clock has caught up (each reading of this clock
    // moves it a millisecond on).
    let ticking = Arc::new(AtomicI64::new(E + 1000));
    let reads = Arc::clone(&ticking);
    let g = Snowflake::new(5)
        .unwrap()
        .max_backward_ms(10)
        .clock(move || reads.fetch_add(1, Ordering::SeqCst));
    let a = g.next_id().unwrap();
    ticking.store(E + 995, Ordering::SeqCst);
    let b = g.next_id().unwrap();
    assert!(b > a);
    assert!(ticking.load(Ordering::SeqCst) > E + 1000);
    assert!(snowflake::decode(b).unwrap().ms_since_epoch >= 1000);
}

#[test]
fn snowflake_waits_out_a_full_millisecond() {
    // With the system clock: more than 4096 ids, strictly increasing, across milliseconds.
    let g = Snowflake::new(1).unwrap();
    let ids: Vec<i64> = (0..10_000).map(|_| g.next_id().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let per_ms = ids
        .iter()
        .fold(std::collections::HashMap::new(), |mut m, id| {
            *m.entry(snowflake::decode(*id).unwrap().ms_since_epoch)
                .or_insert(0) += 1;
            m
        });
    assert!(per_ms.values().all(|n| *n <= 4096));
    assert!(ids.iter().all(|id| snowflake::worker(*id).unwrap() == 1));
}

#[test]
fn snowflake_bad_input() {
    assert_eq!(
        Snowflake::new(1024).unwrap_err().to_string(),
        "snowflake worker id 1024 is out of range 0..1023 (see Snowflake::new)"
    );
    assert!(Snowflake::new(-1).is_err());
    assert!(Snowflake::new(0).unwrap().epoch_ms(-1).is_err());
    assert_eq!(
        snowflake::decode(-1).unwrap_err().to_string(),
        "invalid snowflake id -1: snowflake ids are never negative"
    );
    let g = Snowflake::new(0)
        .unwrap()
        .clock(|| snowflake::DEFAULT_EPOCH_MS - 1);
    assert!(g
        .next_id()
        .unwrap_err()
        .to_string()
        .contains("is before the snowflake epoch"));
}

#[test]
fn rapkey_matches_the_servers_vectors() {
    for key in [
        "ord.cn.sh.202407.8842-2",
        "usr.cn.10001-x",
        "pay.us.ca.acme.202406.3311-h",
        "ord.cn.sh.202407.58-~",
    ] {
        assert!(rapkey::is_valid(key), "{key}");
        assert_eq!(rapkey::validate(key), Ok(()));
        let (body, check) = key.rsplit_once('-').unwrap();
        assert_eq!(rapkey::check_char(body).unwrap().to_string(), check);
        let parsed = rapkey::parse(key).unwrap();
        let segments: Vec<&str> = parsed.segments.iter().map(String::as_str).collect();
        assert_eq!(rapkey::build(&parsed.kind, &segments).unwrap(), key);
    }
    assert_eq!(
        rapkey::build(" ORD", &["CN", "sh", "202407", "8842"]).unwrap(),
        "ord.cn.sh.202407.8842-2"
    );
    assert_eq!(
        rapkey::prefix_range("ord.cn.sh").unwrap(),
        ("ord.cn.sh-".to_string(), "ord.cn.sh/".to_string())
    );
    assert_eq!(
        rapkey::normalize(" ORD.CN.SH.202407.8842-2 ").unwrap(),
        "ord.cn.sh.202407.8842-2"
    );
}

#[test]
fn rapkey_errors_name_the_problem() {
    let err = |key: &str| rapkey::validate(key).unwrap_err().to_string();
    assert!(!rapkey::is_valid("ord.cn.sh.202407.8842-3"));
    assert_eq!(
        err("ord.cn.sh.202407.8842-3"),
        "invalid input syntax for type rapkey: \"ord.cn.sh.202407.8842-3\": \
         Wrong check character: expected '2', found '3'."
    );
    assert!(err("ORD.cn.sh.202407.8842-2")
        .ends_with("Type \"ORD\" has a character outside [a-z]: 'O' at position 1."));
    assert!(err("ord.cn..8842-2").ends_with("Segment 2 is empty."));
    assert!(err("ord-2").contains("must be followed by at least one segment"));
    assert!(err("ord.cn").contains("Missing '-' before the check character."));
    let e = rapkey::build("ord", &["cn", "s h"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid rapkey part: Segment 2 \"s h\" has a character outside [a-z0-9]: ' ' at \
         position 2."
    );
    assert!(rapkey::build("ord", &[]).is_err());
    assert!(rapkey::prefix_range("ord.cn.").is_err());
}

#[cfg(feature = "serde")]
#[test]
fn serde_uses_the_text() {
    let id = Xid::from_bytes(VECTORS[0].0);
    let json = serde_json::to_string(&vec![id]).unwrap();
    assert_eq!(json, r#"["9m4e2mr0ui3e8a215n4g"]"#);
    let back: Vec<Xid> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, vec![id]);
    let upper: Xid = serde_json::from_str(r#""9M4E2MR0UI3E8A215N4G""#).unwrap();
    assert_eq!(upper, id);
    let err = serde_json::from_str::<Xid>(r#""9m4e2mr0ui3e8a215n41""#).unwrap_err();
    assert!(
        err.to_string()
            .contains("The last character must be 0 or g"),
        "{err}"
    );
    assert!(serde_json::from_str::<Xid>("1").is_err());
}
