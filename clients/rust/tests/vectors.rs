//! Runs the shared vectors (tests/vectors/xid12.json, rapkey.json, snowflake.json; README.md
//! there says what each holds) through the client's API: every output, and every error's text,
//! which is the server's message, then `": "` and its DETAIL.

#[path = "../../../crates/idgen-core/tests/common/json.rs"]
mod json;

use json::{vectors, Json};
use pg_idgen_client::{rapkey, snowflake, Error, Xid};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// The error text a case expects: the message, then `": "` and the DETAIL when there is one.
fn expected(case: &Json) -> String {
    match case.opt_str("detail") {
        Some(detail) => format!("{}: {detail}", case.str("message")),
        None => case.str("message").to_string(),
    }
}

fn at(unix_seconds: i64) -> SystemTime {
    if unix_seconds < 0 {
        UNIX_EPOCH - Duration::from_secs(unix_seconds.unsigned_abs())
    } else {
        UNIX_EPOCH + Duration::from_secs(unix_seconds as u64)
    }
}

#[test]
fn xid12() {
    let doc = vectors("xid12.json");
    for case in doc.arr("valid") {
        let id = Xid::parse(case.str("input")).unwrap();
        assert_eq!(id.to_string(), case.str("text"));
        assert_eq!(hex(id.as_bytes()), case.str("bytes"));
        assert_eq!(i64::from(id.unix_seconds()), case.int("unix_seconds"));
        assert_eq!(hex(&id.machine()), case.str("machine"));
        assert_eq!(i64::from(id.pid()), case.int("pid"));
        assert_eq!(i64::from(id.counter()), case.int("counter"));
        assert_eq!(Xid::try_from(&unhex(case.str("bytes"))[..]), Ok(id));
    }
    for case in doc.arr("invalid_text") {
        let text = case.str("text");
        let error = Xid::parse(text).unwrap_err();
        assert!(matches!(error, Error::XidText { .. }));
        assert_eq!(error.to_string(), expected(case), "{text:?}");
    }
    for case in doc.arr("invalid_bytes") {
        let error = Xid::try_from(&unhex(case.str("bytes"))[..]).unwrap_err();
        assert_eq!(error.to_string(), expected(case));
    }
    for case in doc.arr("parts") {
        // The client takes a machine id of 3 bytes, a u16 pid and a u32 counter: the other
        // cases cannot be written.
        let machine = <[u8; 3]>::try_from(unhex(case.str("machine")));
        let pid = u16::try_from(case.int("pid"));
        let counter = u32::try_from(case.int("counter"));
        let (Ok(machine), Ok(pid), Ok(counter)) = (machine, pid, counter) else {
            continue;
        };
        let made = Xid::from_parts(at(case.int("unix_seconds")), machine, pid, counter);
        match case.opt_str("text") {
            Some(text) => assert_eq!(made.unwrap().to_string(), text),
            None => assert_eq!(made.unwrap_err().to_string(), expected(case)),
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
        let parsed = rapkey::parse(key).unwrap();
        let segments: Vec<&str> = parsed.segments.iter().map(String::as_str).collect();
        assert_eq!(rapkey::build(&parsed.kind, &segments).unwrap(), key);
    }
    for case in doc.arr("invalid_bodies") {
        let error = rapkey::check_char(case.str("body")).unwrap_err();
        assert_eq!(error.to_string(), expected(case));
    }
    for case in doc.arr("invalid_keys") {
        let key = case.str("key");
        assert!(!rapkey::is_valid(key));
        assert_eq!(
            rapkey::validate(key).unwrap_err().to_string(),
            expected(case)
        );
        assert_eq!(rapkey::parse(key).unwrap_err().to_string(), expected(case));
    }
    for case in doc.arr("normalize") {
        let got = rapkey::normalize(case.str("input"));
        match case.opt_str("key") {
            Some(key) => assert_eq!(got.unwrap(), key),
            None => assert_eq!(got.unwrap_err().to_string(), expected(case)),
        }
    }
    for case in doc.arr("build") {
        let segments: Vec<&str> = case.arr("segments").iter().map(Json::as_str).collect();
        let got = rapkey::build(case.str("type"), &segments);
        match case.opt_str("key") {
            Some(key) => assert_eq!(got.unwrap(), key),
            None => assert_eq!(got.unwrap_err().to_string(), expected(case)),
        }
    }
    for case in doc.arr("prefix_range") {
        let got = rapkey::prefix_range(case.str("prefix"));
        match case.get("range") {
            Some(_) => {
                let range = case.arr("range");
                let (lo, hi) = got.unwrap();
                assert_eq!(
                    (lo.as_str(), hi.as_str()),
                    (range[0].as_str(), range[1].as_str())
                );
            }
            None => assert_eq!(got.unwrap_err().to_string(), expected(case)),
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
        assert_eq!(
            i64::from(snowflake::worker(id).unwrap()),
            case.int("worker")
        );
        assert_eq!(
            i64::from(snowflake::sequence(id).unwrap()),
            case.int("sequence")
        );
        assert_eq!(snowflake::unix_ms(id, epoch), Ok(case.int("unix_ms")));
    }
    for case in doc.arr("invalid_ids") {
        let error = snowflake::worker(case.int("id")).unwrap_err();
        assert_eq!(error.to_string(), expected(case));
    }
}

/// tests/vectors/edition_rule.sql: how every client finds the edition and its xid12 type; this
/// client's EDITION_QUERY starts with it, byte for byte, then selects its own columns.
#[test]
fn edition_query_starts_with_the_shared_rule() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/edition_rule.sql"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let rule: String = text
        .lines()
        .filter(|line| !line.starts_with("--"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(rule.matches("WITH c AS (").count(), 1);
    assert!(
        pg_idgen_client::edition::EDITION_QUERY
            .trim_start_matches('\n')
            .starts_with(rule.trim_end_matches('\n')),
        "EDITION_QUERY does not start with tests/vectors/edition_rule.sql"
    );
}
