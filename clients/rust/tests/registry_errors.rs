//! The registry's error vectors (tests/vectors/registry_errors.json): every SQLSTATE maps to
//! its condition through `Error::registry_condition`, and every fenced message gives its
//! `until` through `Error::fenced_until_us`. No server.

use pg_idgen_client::{Error, RegistryCondition};
use serde_json::Value;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/registry_errors.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn registry_error(code: &str, message: &str) -> Error {
    Error::Registry {
        sqlstate: Some(code.to_string()),
        message: message.to_string(),
    }
}

/// Unix µs of `YYYY-MM-DDTHH:MM:SS.ffffffZ`, counted day by day (not the crate's arithmetic).
fn unix_us(text: &str) -> i64 {
    let n = |r: std::ops::Range<usize>| text[r].parse::<i64>().unwrap();
    assert_eq!(text.len(), 27, "{text}");
    let (year, month, day) = (n(0..4), n(5..7), n(8..10));
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut days: i64 = (1970..year).map(|y| if leap(y) { 366 } else { 365 }).sum();
    let lengths = [
        31,
        if leap(year) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    days += lengths[..(month - 1) as usize].iter().sum::<i64>() + day - 1;
    let seconds = days * 86_400 + n(11..13) * 3600 + n(14..16) * 60 + n(17..19);
    seconds * 1_000_000 + n(20..26)
}

#[test]
fn every_code_maps_to_its_condition() {
    let v = vectors();
    let conditions = v["conditions"].as_array().unwrap();
    assert!(conditions.len() >= 11);
    for c in conditions {
        let code = c["sqlstate"].as_str().unwrap();
        let class = c["class"].as_str().unwrap();
        let condition = registry_error(code, "refused").registry_condition();
        assert_eq!(
            condition.map(RegistryCondition::class_name),
            Some(class),
            "SQLSTATE {code}"
        );
        assert_eq!(RegistryCondition::from_sqlstate(code), condition);
    }
    // A code the contract does not list is a plain registry error; so is one without a code.
    assert_eq!(registry_error("22023", "x").registry_condition(), None);
    assert_eq!(registry_error("P0001", "x").registry_condition(), None);
    let plain = Error::Registry {
        sqlstate: None,
        message: "x".into(),
    };
    assert_eq!(plain.registry_condition(), None);
    let unavailable = Error::RegistryUnavailable {
        message: "x".into(),
    };
    assert_eq!(
        unavailable.registry_condition(),
        Some(RegistryCondition::Unavailable)
    );
}

#[test]
fn every_fenced_message_gives_its_until() {
    let v = vectors();
    let messages = v["fenced_messages"].as_array().unwrap();
    assert!(messages.len() >= 4);
    for m in messages {
        let message = m["message"].as_str().unwrap();
        let want = m["until"].as_str().map(unix_us);
        let e = registry_error("IG001", message);
        assert_eq!(
            e.registry_condition(),
            Some(RegistryCondition::RegistryFenced)
        );
        assert_eq!(e.fenced_until_us(), want, "{message}");
        // The Rust client appends the server's DETAIL after ": ".
        let detailed = registry_error(
            "IG001",
            &format!("{message}: the registry moved to timeline 2"),
        );
        assert_eq!(detailed.fenced_until_us(), want, "{message} with a DETAIL");
        if let Some(us) = want {
            let t = e.fenced_until().unwrap();
            let got = t.duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as i64;
            assert_eq!(got, us);
        }
        // The same message under another code is no fence.
        assert_eq!(registry_error("55000", message).fenced_until_us(), None);
    }
}
