//! Runs tests/vectors/registry_errors.json (the writer registry's refusals, one SQLSTATE per
//! condition; its "format" key says what it holds) against `idgen_core::registry`.
//!
//! The core crate has no JSON dependency: `common/json.rs` reads it.

mod common;

use common::json::{vectors, Json};
use idgen_core::pgtime;
use idgen_core::registry::RegistryCondition;

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
