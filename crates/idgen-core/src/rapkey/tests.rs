use super::*;
use proptest::prelude::*;

#[test]
fn numbering_prefix_needs_room_for_the_number() {
    assert_eq!(normalize_prefix(" ORD.cn.sh "), Ok("ord.cn.sh".to_string()));
    assert_eq!(
        normalize_prefix("ord.a.b.c.d"),
        Ok("ord.a.b.c.d".to_string())
    );
    assert_eq!(
        normalize_prefix("ord.a.b.c.d.e"),
        Err(RapkeyError::PrefixFull)
    );
    // As a range prefix the same five segments are fine.
    assert!(prefix_range("ord.a.b.c.d.e").is_ok());
}

const VECTORS: [&str; 4] = [
    "ord.cn.sh.202407.8842-2",
    "usr.cn.10001-x",
    "pay.us.ca.acme.202406.3311-h",
    "ord.cn.sh.202407.58-~",
];

fn err(key: &str) -> RapkeyError {
    validate(key).expect_err(key)
}

/// `body` plus its correct check character.
fn key_of(body: &str) -> String {
    format!("{body}-{}", check_char(body).unwrap())
}

#[test]
fn spec_vectors_are_valid() {
    for k in VECTORS {
        assert_eq!(validate(k), Ok(()), "{k}");
        assert!(is_valid(k));
        let (body, c) = k.rsplit_once('-').unwrap();
        assert_eq!(check_char(body).unwrap().to_string(), c);
    }
    assert_eq!(check_char("ord.cn.sh.202407.8842"), Ok('2'));
    assert_eq!(check_char("ord.cn.sh.202407.58"), Ok('~'));
}

#[test]
fn damm_table_is_a_totally_antisymmetric_quasigroup() {
    for x in 0..37u8 {
        assert_eq!(damm_op(x, x), 0);
        let mut row = [false; 37];
        let mut col = [false; 37];
        for y in 0..37u8 {
            row[damm_op(x, y) as usize] = true;
            col[damm_op(y, x) as usize] = true;
            for c in 0..37u8 {
                if x != y {
                    assert_ne!(damm_op(damm_op(c, x), y), damm_op(damm_op(c, y), x));
                }
            }
        }
        assert!(row.iter().all(|&b| b) && col.iter().all(|&b| b));
    }
}

#[test]
fn grammar_rejections() {
    use RapkeyError::*;
    assert_eq!(err(""), Empty);
    assert_eq!(err("ord"), MissingCheckSeparator);
    assert_eq!(err("ord-x"), MissingSegment { kind: "ord".into() });
    assert_eq!(err("ord.cn.sh.202407.8842"), MissingCheckSeparator);
    assert_eq!(
        err("ORD.cn.sh.202407.8842-2"),
        TypeChar {
            value: "ORD".into(),
            position: 1,
            found: 'O'
        }
    );
    assert_eq!(
        err("ord.cn.SH.202407.8842-2"),
        SegmentChar {
            index: 2,
            value: "SH".into(),
            position: 1,
            found: 'S'
        }
    );
    assert_eq!(
        err("ord.cn.sh.202407.8842-X"),
        InvalidCheckChar { found: 'X' }
    );
    assert_eq!(
        err("ord.cn.sh.202407.8842-3"),
        WrongCheckChar {
            expected: '2',
            found: '3'
        }
    );
    assert!(err("ord.cn.sh.202407.8842-3").is_checksum());
    assert_eq!(
        err(".ord.cn-2"),
        TypeLength {
            value: String::new(),
            len: 0
        }
    );
    assert_eq!(err("ord.cn.-2"), EmptySegment { index: 2 });
    assert_eq!(err("ord.cn..sh-2"), EmptySegment { index: 2 });
    assert_eq!(err("ord..cn-2"), EmptySegment { index: 1 });
    assert_eq!(err("ord.cn.sh.202407.8842-"), MissingCheckChar);
    assert_eq!(
        err("ord.cn.sh.202407.8842-22"),
        ExtraCheckChars { check: "22".into() }
    );
    assert_eq!(
        err("ord.cn.sh.202407.8842-2-2"),
        SegmentChar {
            index: 4,
            value: "8842-2".into(),
            position: 5,
            found: '-'
        }
    );
    assert_eq!(
        err("ord.cn.shé.1-2"),
        SegmentChar {
            index: 2,
            value: "shé".into(),
            position: 3,
            found: 'é'
        }
    );
    assert_eq!(err("ord.cn.sh.1-é"), InvalidCheckChar { found: 'é' });
    assert_eq!(
        err("ord.c\0n.1-2"),
        SegmentChar {
            index: 1,
            value: "c\0n".into(),
            position: 2,
            found: '\0'
        }
    );
    assert_eq!(err("ord.cn.1-\0"), InvalidCheckChar { found: '\0' });
    assert_eq!(err("ord.cn.1-."), InvalidCheckChar { found: '.' });
    assert_eq!(
        err("o.cn-2"),
        TypeLength {
            value: "o".into(),
            len: 1
        }
    );
    assert_eq!(
        err("ordersabc.cn-2"),
        TypeLength {
            value: "ordersabc".into(),
            len: 9
        }
    );
    assert_eq!(
        err("o1d.cn-2"),
        TypeChar {
            value: "o1d".into(),
            position: 2,
            found: '1'
        }
    );
    assert_eq!(err("ord.a.b.c.d.e.f-2"), TooManySegments { count: 6 });
    let seg33 = "a".repeat(33);
    assert_eq!(
        err(&format!("ord.{seg33}-2")),
        SegmentTooLong {
            index: 1,
            value: seg33.clone(),
            len: 33
        }
    );
    assert!(is_valid(&key_of(&format!("ord.{}", "a".repeat(32)))));
    // Whitespace is not trimmed by validate.
    assert_eq!(
        err(" ord.cn.sh.202407.8842-2"),
        TypeChar {
            value: " ord".into(),
            position: 1,
            found: ' '
        }
    );
    assert_eq!(
        err("ord.cn.sh.202407.8842-2 "),
        ExtraCheckChars { check: "2 ".into() }
    );
    for k in ["", "ord", "ord-x", "ORD.CN.1-2", "ord.cn.sh.202407.8842-3"] {
        assert!(!is_valid(k));
    }
}

#[test]
fn length_limits() {
    // 128 characters exactly: type(8) + 4×(1+32) = 140 is too much, so shape it.
    let body = format!(
        "ordersab.{}.{}.{}.{}",
        "a".repeat(32),
        "b".repeat(32),
        "c".repeat(32),
        "d".repeat(18)
    );
    assert_eq!(body.len(), MAX_BODY_LEN);
    let key = key_of(&body);
    assert_eq!(key.len(), MAX_KEY_LEN);
    assert!(is_valid(&key));
    let long = format!("{body}e-{}", 'x');
    assert_eq!(err(&long), RapkeyError::KeyTooLong { len: 129 });
    assert_eq!(
        check_char(&format!("{body}e")),
        Err(RapkeyError::BodyTooLong { len: 127 })
    );
    let segs = [
        "a".repeat(32),
        "b".repeat(32),
        "c".repeat(32),
        "d".repeat(19),
    ];
    let segs: Vec<&str> = segs.iter().map(|s| s.as_str()).collect();
    assert_eq!(
        build("ordersab", &segs),
        Err(RapkeyError::BodyTooLong { len: 127 })
    );
    // Huge and non-ASCII inputs never panic.
    let huge = "é".repeat(1_000_000);
    assert_eq!(err(&huge), RapkeyError::KeyTooLong { len: 1_000_000 });
    assert!(build("ord", &[&huge]).is_err());
    assert!(check_char(&huge).is_err());
    assert!(prefix_range(&huge).is_err());
    assert!(normalize(&huge).is_err());
    assert!(matches!(
        build("ord", &[&huge]),
        Err(RapkeyError::SegmentChar {
            index: 1,
            position: 1,
            found: 'é',
            ..
        })
    ));
    // 128 multibyte characters: within the length limit, rejected by grammar.
    assert!(matches!(
        err(&format!("{}.a-2", "é".repeat(124))),
        RapkeyError::TypeChar { .. }
    ));
}

#[test]
fn check_char_requires_a_grammatical_body() {
    use RapkeyError::*;
    assert_eq!(
        check_char(""),
        Err(TypeLength {
            value: String::new(),
            len: 0
        })
    );
    assert_eq!(
        check_char("ord"),
        Err(MissingSegment { kind: "ord".into() })
    );
    assert_eq!(
        check_char("ord.cn-2"),
        Err(SegmentChar {
            index: 1,
            value: "cn-2".into(),
            position: 3,
            found: '-'
        })
    );
    assert!(check_char("ORD.cn").is_err());
    assert!(check_char("ord.cn.").is_err());
    assert!(check_char("ord.cn~").is_err());
}

#[test]
fn errors_carry_their_data() {
    use RapkeyError::*;
    let e = |r: Result<String, RapkeyError>| r.unwrap_err();
    assert_eq!(
        e(build("ord", &["cn", "Sh!"])),
        SegmentChar {
            index: 2,
            value: "Sh!".into(),
            position: 3,
            found: '!'
        }
    );
    assert_eq!(
        e(build(" ", &["x"])),
        TypeLength {
            value: String::new(),
            len: 0
        }
    );
    assert_eq!(e(build("ord", &[])), MissingSegment { kind: "ord".into() });
    assert_eq!(
        e(build("ord", &["a", "b", "c", "d", "e", "f"])),
        TooManySegments { count: 6 }
    );
    assert_eq!(e(build("ord", &["a", " "])), EmptySegment { index: 2 });
    // Parts are kept whole, however long: the glue bounds what it shows.
    let long = "a".repeat(40);
    assert_eq!(
        err(&format!("ord.{long}-2")),
        SegmentTooLong {
            index: 1,
            value: long.clone(),
            len: 40
        }
    );
    assert_eq!(
        err(&format!("ord.{long}!-2")),
        SegmentChar {
            index: 1,
            value: format!("{long}!"),
            position: 41,
            found: '!'
        }
    );
    assert_eq!(
        err("ord.cn-2~x"),
        ExtraCheckChars {
            check: "2~x".into()
        }
    );
    for e in [
        err(""),
        err("ord.cn"),
        err("ord.cn-"),
        err("ord.cn-22"),
        err("ord.cn-A"),
        err("o.cn-2"),
        err("o1.cn-2"),
        err("ord-2"),
        err("a1.a.b.c.d.e.f-2"),
        err("ord..a-2"),
        err(&format!("ord.{}-2", "a".repeat(40))),
        err("ord.a!-2"),
        err("ord.cn.sh.202407.8842-3"),
        err(&"a".repeat(200)),
        check_char(&"a".repeat(200)).unwrap_err(),
    ] {
        assert_eq!(e.is_checksum(), matches!(e, WrongCheckChar { .. }), "{e:?}");
    }
}

#[test]
fn build_normalize_parse_round_trip() {
    assert_eq!(
        build(" ORD ", &["CN", " sh", "202407 ", "8842"]).unwrap(),
        "ord.cn.sh.202407.8842-2"
    );
    assert_eq!(build("usr", &["cn", "10001"]).unwrap(), "usr.cn.10001-x");
    assert_eq!(
        build("pay", &["us", "ca", "acme", "202406", "3311"]).unwrap(),
        "pay.us.ca.acme.202406.3311-h"
    );
    assert_eq!(
        build("ord", &["cn.sh"]),
        Err(RapkeyError::SegmentChar {
            index: 1,
            value: "cn.sh".into(),
            position: 3,
            found: '.'
        })
    );
    assert_eq!(
        build("Or1", &["x"]),
        Err(RapkeyError::TypeChar {
            value: "Or1".into(),
            position: 3,
            found: '1'
        })
    );
    assert_eq!(
        normalize("  ORD.CN.SH.202407.8842-2\n").unwrap(),
        "ord.cn.sh.202407.8842-2"
    );
    assert_eq!(
        normalize("\tord.cn.sh.202407.58-~ ").unwrap(),
        "ord.cn.sh.202407.58-~"
    );
    assert_eq!(
        normalize(" ORD.CN.SH.202407.8842-3 "),
        Err(RapkeyError::WrongCheckChar {
            expected: '2',
            found: '3'
        })
    );
    assert_eq!(normalize("   "), Err(RapkeyError::Empty));
    assert_eq!(
        normalize("ORD. CN.1-2"),
        Err(RapkeyError::SegmentChar {
            index: 1,
            value: " cn".into(),
            position: 1,
            found: ' '
        })
    );
    for k in VECTORS {
        let p = parse(k).unwrap();
        let body = k.rsplit_once('-').unwrap().0;
        assert_eq!(p.kind, body.split('.').next().unwrap());
        assert_eq!(build(p.kind, &p.segments).unwrap(), k);
        assert_eq!(normalize(&k.to_ascii_uppercase()).unwrap(), k);
    }
    let p = parse("ord.cn.sh.202407.8842-2").unwrap();
    assert_eq!(
        p,
        ParsedKey {
            kind: "ord",
            segments: vec!["cn", "sh", "202407", "8842"],
            check: '2'
        }
    );
    assert!(parse("ord.cn.sh.202407.8842-3").is_err());
}

fn in_range(key: &str, (lo, hi): &(String, String)) -> bool {
    lo.as_str() <= key && key < hi.as_str()
}

#[test]
fn prefix_range_is_exact() {
    let r = prefix_range("ord.cn.sh.202407").unwrap();
    assert_eq!(
        r,
        (
            "ord.cn.sh.202407-".to_string(),
            "ord.cn.sh.202407/".to_string()
        )
    );
    assert_eq!(
        prefix_range_parts(" ORD", &["cn ", "SH", "202407"]).unwrap(),
        r
    );
    assert_eq!(prefix_range(" ORD.CN.SH.202407 ").unwrap(), r);
    let under = [
        "ord.cn.sh.202407",
        "ord.cn.sh.202407.0",
        "ord.cn.sh.202407.8842",
        "ord.cn.sh.202407.58",
        "ord.cn.sh.202407.zzzz",
        "ord.cn.sh.202407.0.0",
        "ord.cn.sh.202407.z.zzzzzzzz",
    ];
    let not_under = [
        "ord.cn.sh.2024071",
        "ord.cn.sh.2024071.1",
        "ord.cn.sh.202407a.1",
        "ord.cn.sh.20240",
        "ord.cn.sh.20240.7",
        "ord.cn.sh.202406.9999",
        "ord.cn.sh.202408",
        "ord.cn.sh.202408.0",
        "ord.cn.sh",
        "ord.cn.sh0.202407.1",
        "ord.cn.si.202407.1",
        "ord.cn.sg.202407.1",
        "ord.cn.sh0",
        "ord.cn",
        "orda.cn.sh.202407.1",
        "or.cn.sh.202407.1",
        "usr.cn.sh.202407.1",
    ];
    for b in under {
        assert!(in_range(&key_of(b), &r), "{b} should be under");
    }
    for b in not_under {
        assert!(!in_range(&key_of(b), &r), "{b} should not be under");
    }
    // A bare type prefix.
    let t = prefix_range("ord").unwrap();
    assert!(in_range(&key_of("ord.a"), &t));
    assert!(in_range(&key_of("ord.zzz.9"), &t));
    assert!(!in_range(&key_of("orda.a"), &t));
    assert!(!in_range(&key_of("or.zzzz"), &t));
    assert!(!in_range(&key_of("ore.a"), &t));
    assert_eq!(prefix_range_parts("ord", &[]).unwrap(), t);
    // Prefixes made of whole, valid parts only.
    assert!(prefix_range("ord.").is_err());
    assert!(prefix_range("ord.cn.sh.202407.8842-2").is_err());
    assert!(prefix_range("ord..cn").is_err());
    assert!(prefix_range("").is_err());
    assert!(prefix_range("o").is_err());
    assert!(prefix_range("ord.a.b.c.d.e.f").is_err());
    assert!(prefix_range("ord.a.b.c.d.e").is_ok());
    assert!(prefix_range_parts("ord", &["a!"]).is_err());
}

// -----------------------------------------------------------------------------------
// Property tests

fn parts_strategy() -> impl Strategy<Value = (String, Vec<String>)> {
    (
        "[a-z]{2,8}",
        prop::collection::vec("[a-z0-9]{1,32}", 1..=MAX_SEGMENTS),
    )
        .prop_filter("body fits", |(t, segs)| {
            t.len() + segs.iter().map(|s| s.len() + 1).sum::<usize>() <= MAX_BODY_LEN
        })
}

fn body_of(kind: &str, segs: &[String]) -> String {
    let mut b = kind.to_string();
    for s in segs {
        b.push('.');
        b.push_str(s);
    }
    b
}

/// Keys from few, overlapping pieces, so prefixes are often shared or extended.
fn small_parts() -> impl Strategy<Value = Vec<String>> {
    let piece = prop::sample::select(vec!["1", "12", "2", "a", "a1", "a0", "z"]);
    (
        prop::sample::select(vec!["ab", "abc", "ac", "b"]),
        prop::collection::vec(piece, 0..=MAX_SEGMENTS),
    )
        .prop_map(|(t, s)| std::iter::once(t).chain(s).map(String::from).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn build_yields_valid_keys((kind, segs) in parts_strategy()) {
        let refs: Vec<&str> = segs.iter().map(|s| s.as_str()).collect();
        let key = build(&kind, &refs).unwrap();
        prop_assert_eq!(validate(&key), Ok(()));
        let body = body_of(&kind, &segs);
        prop_assert_eq!(&key, &format!("{}-{}", body, check_char(&body).unwrap()));
        // Case and surrounding whitespace do not matter to build and normalize.
        let upper: Vec<String> = segs.iter().map(|s| format!(" {} ", s.to_ascii_uppercase())).collect();
        let upper: Vec<&str> = upper.iter().map(|s| s.as_str()).collect();
        prop_assert_eq!(&build(&kind.to_ascii_uppercase(), &upper).unwrap(), &key);
        prop_assert_eq!(&normalize(&format!(" {} ", key.to_ascii_uppercase())).unwrap(), &key);
        let p = parse(&key).unwrap();
        prop_assert_eq!(p.kind, kind.as_str());
        prop_assert_eq!(p.segments, refs);
    }

    #[test]
    fn check_char_agrees_with_validate((kind, segs) in parts_strategy(), c in prop::sample::select(CHECK_ALPHABET.chars().collect::<Vec<_>>())) {
        let body = body_of(&kind, &segs);
        let expected = check_char(&body).unwrap();
        let key = format!("{body}-{c}");
        if c == expected {
            prop_assert_eq!(validate(&key), Ok(()));
        } else {
            prop_assert_eq!(validate(&key), Err(RapkeyError::WrongCheckChar { expected, found: c }));
        }
    }

    #[test]
    fn prefix_range_matches_part_prefixes(a in small_parts(), b in small_parts(), n in 0usize..=MAX_SEGMENTS) {
        let n = n.min(a.len() - 1);
        let prefix = a[..=n].join(".");
        let segs: Vec<&str> = a[1..=n].iter().map(|s| s.as_str()).collect();
        if a[0].len() < MIN_TYPE_LEN {
            prop_assert!(prefix_range(&prefix).is_err());
            return Ok(());
        }
        let r = prefix_range(&prefix).unwrap();
        prop_assert_eq!(&prefix_range_parts(&a[0], &segs).unwrap(), &r);
        for parts in [&a, &b] {
            if parts.len() < 2 || parts[0].len() < 2 {
                continue; // not a valid key
            }
            let key = key_of(&parts.join("."));
            let expected = parts.len() > n && parts[..=n] == a[..=n];
            prop_assert_eq!(in_range(&key, &r), expected, "{} in {:?}", key, r);
        }
    }

    #[test]
    fn arbitrary_input_never_panics(s in "\\PC{0,140}", bytes in prop::collection::vec(any::<u8>(), 0..140)) {
        let lossy = String::from_utf8_lossy(&bytes).into_owned();
        for x in [s.as_str(), lossy.as_str()] {
            let _ = validate(x);
            let _ = check_char(x);
            let _ = normalize(x);
            let _ = prefix_range(x);
            let _ = build(x, &[x, x]);
            let _ = prefix_range_parts(x, &[x]);
        }
    }
}

proptest! {
    #[test]
    fn unrolled_damm_matches_the_chain(body in "[a-z0-9.]{1,126}") {
        let t = body.bytes().fold(0u64, |t, b| (2 * (t + u64::from(symbol_value(b)))) % 37);
        prop_assert_eq!((37 - t) % 37, u64::from(damm_interim(&body)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]
    #[test]
    fn fast_check_agrees_with_parse(key in "[a-z0-9.~A-Z-]{0,40}") {
        prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{}", key);
    }

    #[test]
    fn fast_check_agrees_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..140)) {
        let key = String::from_utf8_lossy(&bytes);
        prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{:?}", key);
    }

    #[test]
    fn fast_check_agrees_near_the_length_limit(
        segs in proptest::collection::vec("[a-z0-9]{20,32}", 4..=5),
        pad in 0usize..8,
    ) {
        let body = format!("ord.{}", segs.join("."));
        let body = format!("{body}{}", "0".repeat(pad));
        if let Ok(c) = check_char(&body) {
            let key = format!("{body}-{c}");
            prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{}", key);
        }
        let key = format!("{body}-0");
        prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{}", key);
    }

    #[test]
    fn fast_check_agrees_on_near_valid_keys(
        kind in "[a-z]{1,9}",
        segs in proptest::collection::vec("[a-z0-9]{0,33}", 0..7),
        check in "[0-9a-z~.-]{0,2}",
    ) {
        let key = format!("{}{}-{}", kind, segs.iter().map(|s| format!(".{s}")).collect::<String>(), check);
        prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{}", key);
        if let Ok(body) = std::str::from_utf8(&key.as_bytes()[..key.len().saturating_sub(2)]) {
            if let Ok(c) = check_char(body) {
                let fixed = format!("{body}-{c}");
                prop_assert_eq!(is_valid(&fixed), parse(&fixed).is_ok(), "{}", fixed);
            }
        }
    }
}

#[test]
fn prefix_range_parts_rejects_a_megabyte() {
    let huge = "a".repeat(1 << 20);
    assert!(prefix_range_parts(&huge, &[]).is_err());
    assert!(prefix_range_parts("ord", &[huge.as_str()]).is_err());
}
