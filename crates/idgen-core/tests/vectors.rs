//! Runs the shared vectors (tests/vectors/xid12.json, rapkey.json, snowflake.json; README.md
//! there says what each holds) against the core: every output, and every error's message and
//! DETAIL as the server shows them.

mod common;

use common::json::{vectors, Json};
use idgen_core::rapkey::{self, Given};
use idgen_core::snowflake;
use idgen_core::words::Words;
use idgen_core::xid::Xid;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// The words a case expects: its message, and its DETAIL (absent or null: none).
fn expected_words(case: &Json) -> Words {
    Words {
        message: case.str("message").to_string(),
        detail: case.opt_str("detail").map(str::to_string),
    }
}

#[test]
fn xid12() {
    let doc = vectors("xid12.json");
    for case in doc.arr("valid") {
        let id = Xid::parse(case.str("input").as_bytes()).unwrap();
        assert_eq!(
            std::str::from_utf8(&id.to_text()).unwrap(),
            case.str("text")
        );
        assert_eq!(hex(&id.0), case.str("bytes"));
        assert_eq!(i64::from(id.time()), case.int("unix_seconds"));
        assert_eq!(hex(&id.machine()), case.str("machine"));
        assert_eq!(i64::from(id.pid()), case.int("pid"));
        assert_eq!(i64::from(id.counter()), case.int("counter"));
        assert_eq!(Xid::from_slice(&unhex(case.str("bytes"))), Ok(id));
    }
    for case in doc.arr("invalid_text") {
        let text = case.str("text");
        let error = Xid::parse(text.as_bytes()).unwrap_err();
        assert_eq!(error.words(text), expected_words(case), "{text:?}");
    }
    for case in doc.arr("invalid_bytes") {
        let error = Xid::from_slice(&unhex(case.str("bytes"))).unwrap_err();
        assert_eq!(error.words(), expected_words(case));
    }
    for case in doc.arr("parts") {
        let made = Xid::from_raw_parts(
            case.int("unix_seconds"),
            &unhex(case.str("machine")),
            case.int("pid"),
            case.int("counter"),
        );
        match case.opt_str("text") {
            Some(text) => assert_eq!(&made.unwrap().to_text()[..], text.as_bytes()),
            None => assert_eq!(made.unwrap_err().words(), expected_words(case), "{case:?}"),
        }
    }
}

#[test]
fn rapkey() {
    let doc = vectors("rapkey.json");
    for case in doc.arr("valid") {
        let (body, key) = (case.str("body"), case.str("key"));
        assert_eq!(
            rapkey::check_char(body).unwrap().to_string(),
            case.str("check")
        );
        assert_eq!(rapkey::validate(key), Ok(()));
        assert!(rapkey::is_valid(key));
        let parsed = rapkey::parse(key).unwrap();
        assert_eq!(rapkey::build(parsed.kind, &parsed.segments).unwrap(), key);
    }
    for case in doc.arr("invalid_bodies") {
        let error = rapkey::check_char(case.str("body")).unwrap_err();
        assert_eq!(error.words(&Given::Body), expected_words(case), "{case:?}");
    }
    for case in doc.arr("invalid_keys") {
        let key = case.str("key");
        assert!(!rapkey::is_valid(key));
        let error = rapkey::validate(key).unwrap_err();
        assert_eq!(error, rapkey::parse(key).unwrap_err());
        let words = error.words(&Given::Key(key.to_string()));
        assert_eq!(words, expected_words(case), "{key:?}");
    }
    for case in doc.arr("normalize") {
        let input = case.str("input");
        match (rapkey::normalize(input), case.opt_str("key")) {
            (Ok(key), Some(expected)) => assert_eq!(key, expected),
            (Err(e), None) => assert_eq!(
                e.words(&Given::Key(input.to_string())),
                expected_words(case)
            ),
            (got, _) => panic!("{input:?}: {got:?}"),
        }
    }
    for case in doc.arr("build") {
        let segments: Vec<&str> = case.arr("segments").iter().map(Json::as_str).collect();
        match (
            rapkey::build(case.str("type"), &segments),
            case.opt_str("key"),
        ) {
            (Ok(key), Some(expected)) => assert_eq!(key, expected),
            (Err(e), None) => assert_eq!(e.words(&Given::Part), expected_words(case)),
            (got, _) => panic!("{case:?}: {got:?}"),
        }
    }
    for case in doc.arr("prefix_range") {
        match (rapkey::prefix_range(case.str("prefix")), case.get("range")) {
            (Ok((lo, hi)), Some(_)) => {
                let range = case.arr("range");
                assert_eq!(
                    (lo.as_str(), hi.as_str()),
                    (range[0].as_str(), range[1].as_str())
                );
            }
            (Err(e), None) => assert_eq!(e.words(&Given::Prefix), expected_words(case)),
            (got, _) => panic!("{case:?}: {got:?}"),
        }
    }
}

#[test]
fn snowflake() {
    let doc = vectors("snowflake.json");
    let epoch: i64 = doc.str("epoch").parse().unwrap();
    assert_eq!(epoch, snowflake::DEFAULT_EPOCH_MS);
    for case in doc.arr("layouts") {
        let id = case.int("id");
        let parts = snowflake::decode(id).unwrap();
        assert_eq!(parts.ms_since_epoch as i64, case.int("ms_since_epoch"));
        assert_eq!(i64::from(parts.worker), case.int("worker"));
        assert_eq!(i64::from(parts.sequence), case.int("sequence"));
        assert_eq!(snowflake::unix_ms(id, epoch), Ok(case.int("unix_ms")));
    }
    // Names of settings do not appear in these messages.
    let names = snowflake::SettingNames {
        worker_id: "-",
        epoch: "-",
        max_backward_ms: "-",
    };
    for case in doc.arr("invalid_ids") {
        let error = snowflake::decode(case.int("id")).unwrap_err();
        assert_eq!(error.words(&names), expected_words(case));
    }
}
