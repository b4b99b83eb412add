//! Runs tests/vectors/registry_errors.json (the writer registry's refusals, one SQLSTATE per
//! condition; its "format" key says what it holds) against `idgen_core::registry`.
//!
//! The core crate has no JSON dependency: `common/json.rs` reads it.

mod common;

use common::json::{vectors, Json};
use common::words;
use idgen_core::pgtime;
use idgen_core::registry::RegistryCondition;
use std::collections::BTreeSet;

#[test]
fn every_condition_by_its_sqlstate() {
    let doc = vectors("registry_errors.json");
    let cases = doc.arr("conditions");
    assert_eq!(cases.len(), RegistryCondition::ALL.len());
    for (case, variant) in cases.iter().zip(RegistryCondition::ALL) {
        let (name, sqlstate) = (case.str("condition"), case.str("sqlstate"));
        let condition = RegistryCondition::from_sqlstate(sqlstate)
            .unwrap_or_else(|| panic!("{name}: no condition for {sqlstate}"));
        assert_eq!(condition, variant, "{name}: the vectors' order");
        assert_eq!(condition.name(), name);
        assert_eq!(condition.sqlstate(), sqlstate, "{name}");
        assert_eq!(condition.class_name(), case.str("class"), "{name}");
    }
}

#[test]
fn other_codes_are_plain_registry_errors() {
    let doc = vectors("registry_errors.json");
    let listed: Vec<&str> = doc
        .arr("conditions")
        .iter()
        .map(|case| case.str("sqlstate"))
        .collect();
    // The codes of these refusals before each had its own (22023: lease too long), others
    // the registry may raise, and near misses.
    for code in [
        "22023", "P0001", "XX000", "23514", "IG000", "IG007", "ig001", "IG01", "IG0011", "",
    ] {
        assert!(!listed.contains(&code), "{code} is listed");
        assert_eq!(RegistryCondition::from_sqlstate(code), None, "{code:?}");
    }
}

#[test]
fn fenced_messages_name_the_fences_end() {
    let doc = vectors("registry_errors.json");
    let cases = doc.arr("fenced_messages");
    assert!(cases.iter().any(|case| case.opt_str("until").is_some()));
    assert!(cases
        .iter()
        .any(|case| case.get("until") == Some(&Json::Null)));
    for case in cases {
        let message = case.str("message");
        let until = RegistryCondition::fenced_until(message);
        assert_eq!(
            until.and_then(pgtime::format_utc_micros).as_deref(),
            case.opt_str("until"),
            "{message:?}"
        );
    }
}

/// The forms the words' templates may use (`forms`), each with its examples.
fn forms(doc: &Json) -> BTreeSet<String> {
    let Some(Json::Obj(forms)) = doc.get("forms") else {
        panic!("no forms")
    };
    for (form, spec) in forms {
        assert!(!spec.str("meaning").is_empty(), "{form}");
        if form == "at" {
            for face in ["message", "python", "typescript", "rust"] {
                assert!(spec.opt_str(face).is_some(), "at: no {face} example");
            }
        } else {
            let examples = match spec.get("examples_ms") {
                Some(_) => spec.arr("examples_ms"),
                None => spec.arr("examples"),
            };
            assert!(!examples.is_empty(), "{form}: no examples");
        }
    }
    forms.keys().cloned().collect()
}

#[test]
fn the_words_of_every_face() {
    let doc = vectors("registry_errors.json");
    assert!(!doc.str("words_format").is_empty());
    let names = words::check(
        &doc,
        &["message", "python", "typescript", "rust"],
        &forms(&doc),
    );
    // The registry's refusals as shown, its unavailability, and the clock errors of the
    // generators: what the Java and Go clients show too.
    for name in [
        "server_refusal",
        "not_installed",
        "unreachable",
        "no_answer",
        "window_unrenewed",
        "clock_before_window",
        "clock_ahead_of_window",
    ] {
        assert!(names.iter().any(|n| n == name), "no words for {name}");
    }
    for entry in doc.arr("words") {
        assert!(
            entry.opt_str("message").is_some(),
            "{}: no words for the new clients",
            entry.str("name")
        );
    }
}
