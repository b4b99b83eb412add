//! The words against the shared vectors (`words` in tests/vectors/registry_errors.json and
//! edge_traces.json, faces `rust` and `rust_async`): every template is rendered with sample
//! values and compared with what the client shows for the same values: `Error`'s `Display` of
//! the error the registries and the edge store return.

use super::*;
use crate::error::EdgeWindow;
use crate::Error;
use idgen_core::grant::GrantError;
use serde_json::Value;
use std::collections::BTreeMap;

fn vectors(file: &str) -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/vectors/");
    serde_json::from_str(&std::fs::read_to_string(format!("{path}{file}")).unwrap()).unwrap()
}

/// A sample value of a placeholder: (the number or text, the form).
#[derive(Clone, Debug)]
enum Sample {
    /// A moment in unix µs (with microseconds the words cut off).
    At(i64),
    /// Seconds, as whole milliseconds.
    Seconds(i64, &'static str),
    Int(i64),
    Text(String),
}

impl Sample {
    fn shown(&self) -> String {
        match self {
            Sample::At(us) => utc(us.div_euclid(1000)),
            Sample::Seconds(ms, "s") => format!("{}", *ms as f64 / 1000.0),
            Sample::Seconds(ms, "s1") => format!("{:.1}", *ms as f64 / 1000.0),
            Sample::Seconds(ms, _) => format!("{:.3}", *ms as f64 / 1000.0),
            Sample::Int(n) => n.to_string(),
            Sample::Text(t) => t.clone(),
        }
    }
}

type Values = BTreeMap<String, Sample>;

/// The placeholders of a template: (name, form).
fn spots(template: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}').unwrap() + open;
        let inner = &rest[open + 1..close];
        let (name, form) = inner.split_once(':').unwrap_or((inner, ""));
        out.push((name.to_string(), form.to_string()));
        rest = &rest[close + 1..];
    }
    out
}

fn render(template: &str, values: &Values) -> String {
    let mut out = template.to_string();
    for (name, form) in spots(template) {
        let spot = if form.is_empty() {
            format!("{{{name}}}")
        } else {
            format!("{{{name}:{form}}}")
        };
        out = out.replacen(&spot, &values[&name].shown(), 1);
    }
    out
}

fn samples(template: &str) -> Values {
    spots(template)
        .into_iter()
        .enumerate()
        .map(|(i, (name, form))| {
            let i = i as i64;
            let sample = match form.as_str() {
                "at" => Sample::At((1_800_000_000_500 + 1000 * i) * 1000 + 123),
                "s" => Sample::Seconds(1500 + 1000 * i, "s"),
                "s1" => Sample::Seconds(1260 + 1000 * i, "s1"),
                "s3" => Sample::Seconds(12_346 + 1000 * i, "s3"),
                "int" => Sample::Int(7 + i),
                "" if name == "kind" => Sample::Text("xid12".into()),
                "" => Sample::Text(format!("<{name}>")),
                other => panic!("form {other}"),
            };
            (name, sample)
        })
        .collect()
}

fn ms(v: &Values, name: &str) -> i64 {
    match &v[name] {
        Sample::At(us) => us.div_euclid(1000),
        Sample::Seconds(ms, _) => *ms,
        other => panic!("{name}: {other:?}"),
    }
}

fn us(v: &Values, name: &str) -> i64 {
    match &v[name] {
        Sample::At(us) => *us,
        other => panic!("{name}: {other:?}"),
    }
}

fn int(v: &Values, name: &str) -> i64 {
    match &v[name] {
        Sample::Int(n) => *n,
        other => panic!("{name}: {other:?}"),
    }
}

fn text(v: &Values, name: &str) -> String {
    v[name].shown()
}

fn duration(v: &Values, name: &str) -> Duration {
    Duration::from_millis(ms(v, name) as u64)
}

/// The grant an edge error names, and its words' values.
fn edge_window(v: &Values) -> EdgeWindow {
    EdgeWindow {
        grant_id: 41,
        kind: "snowflake",
        slot: 800,
        lo_us: 1_800_000_000_000_000,
        hi_us: 1_802_419_200_000_123,
        device: "dev 1".into(),
    }
    .with_values(v)
}

trait WithValues {
    fn with_values(self, v: &Values) -> Self;
}

impl WithValues for EdgeWindow {
    fn with_values(mut self, v: &Values) -> Self {
        if v.contains_key("grant_id") {
            self.grant_id = int(v, "grant_id");
            self.slot = int(v, "slot");
            self.lo_us = us(v, "lo");
            self.hi_us = us(v, "hi");
            self.device = text(v, "device");
            self.kind = if text(v, "kind") == "xid12" {
                "xid12"
            } else {
                "snowflake"
            };
        }
        self
    }
}

/// What the Rust client shows for the words `name` of `file` with values `v` (face: `rust` or
/// `rust_async`).
fn shown(file: &str, name: &str, face: &str, v: &Values) -> String {
    let edge = |message: String| Error::Edge { message }.to_string();
    match (file, name) {
        ("registry_errors.json", "server_refusal") => crate::registry::server_refusal(
            text(v, "sqlstate"),
            refusal_message(&text(v, "message"), Some(&text(v, "detail"))),
        )
        .to_string(),
        ("registry_errors.json", "server_refusal_no_detail") => crate::registry::server_refusal(
            text(v, "sqlstate"),
            refusal_message(&text(v, "message"), None),
        )
        .to_string(),
        ("registry_errors.json", "needs_0_7_0") => {
            crate::registry::server_refusal("42703".into(), text(v, "message")).to_string()
        }
        ("registry_errors.json", "not_installed") => crate::registry::not_installed().to_string(),
        ("registry_errors.json", "closed") => Error::Closed.to_string(),
        ("registry_errors.json", "unreachable") => {
            crate::registry::unavailable(unreachable(&text(v, "cause"))).to_string()
        }
        ("registry_errors.json", "no_answer") if face == "rust" => {
            crate::registry::unavailable(no_answer(duration(v, "timeout"))).to_string()
        }
        ("registry_errors.json", "no_answer") => {
            crate::registry::unavailable(no_answer_async(duration(v, "timeout"))).to_string()
        }
        ("registry_errors.json", "busy") => {
            crate::registry::unavailable(busy(duration(v, "timeout"))).to_string()
        }
        ("registry_errors.json", "window_unrenewed") => {
            crate::registry::window_unrenewed(Some(ms(v, "hi")), duration(v, "renew_wait"))
                .to_string()
        }
        ("registry_errors.json", "grant_unacquired") => {
            crate::registry::window_unrenewed(None, duration(v, "renew_wait")).to_string()
        }
        ("registry_errors.json", "window_unreachable") => crate::registry::renewal_failed(
            &crate::registry::unavailable(text(v, "cause")),
            Some(ms(v, "hi")),
        )
        .to_string(),
        ("registry_errors.json", "grant_unreachable") => {
            crate::registry::renewal_failed(&crate::registry::unavailable(text(v, "cause")), None)
                .to_string()
        }
        ("registry_errors.json", "clock_before_window") => {
            Error::from(GrantError::ClockBeforeWindow {
                behind_ms: ms(v, "behind"),
                window_start_unix_ms: ms(v, "start"),
                max_wait_ms: ms(v, "max_wait"),
            })
            .to_string()
        }
        ("registry_errors.json", "clock_ahead_of_window") => {
            Error::from(GrantError::ClockAfterWindow {
                ahead_ms: ms(v, "past"),
                window_end_unix_ms: ms(v, "hi"),
            })
            .to_string()
        }
        ("edge_traces.json", "grant") => edge_window(v).to_string(),
        ("edge_traces.json", "cloned") => Error::EdgeCloned {
            message: edge_cloned(&text(v, "kept")),
            detail: None,
            hint: None,
        }
        .to_string(),
        ("edge_traces.json", "clock_before_window") => Error::EdgeClockBeforeWindow {
            clock_ms: ms(v, "now"),
            grant: edge_window(v),
        }
        .to_string(),
        ("edge_traces.json", "window_ended" | "used_up") => Error::EdgeWindowEnded {
            clock_ms: ms(v, "now"),
            grant: edge_window(v),
            used_up: name == "used_up",
            last_id_us: v.get("last").map(|_| us(v, "last")),
        }
        .to_string(),
        ("edge_traces.json", "kept") => edge_kept(&text(v, "message"), Some(&text(v, "detail"))),
        ("edge_traces.json", "device_conflict") => Error::EdgeCloned {
            message: text(v, "message"),
            detail: Some(text(v, "detail")),
            hint: Some(text(v, "hint")),
        }
        .to_string(),
        ("edge_traces.json", "no_grant") => {
            edge(edge_no_grant(&text(v, "kind"), &text(v, "device")))
        }
        ("edge_traces.json", "no_grant_to_sync") => {
            edge(edge_no_grant_to_sync(&text(v, "kind"), &text(v, "device")))
        }
        ("edge_traces.json", "already_enrolled") => {
            edge(edge_already_enrolled(&edge_window(v).to_string()))
        }
        ("edge_traces.json", "sqlite_in_transaction") => {
            edge(EDGE_SQLITE_IN_TRANSACTION.to_string())
        }
        _ => panic!("{file}: no words for {name} ({face})"),
    }
}

#[test]
fn the_forms_are_the_clients() {
    let doc = vectors("registry_errors.json");
    let forms = &doc["forms"];
    assert_eq!(
        utc(1_800_000_000_500),
        forms["at"]["rust"].as_str().unwrap()
    );
    assert_eq!(utc(-1), "1969-12-31 23:59:59.999 UTC");
    for (value, shown) in [
        (5000, "5.0 s"),
        (1260, "1.3 s"),
        (40, "0.0 s"),
        (-1260, "-1.3 s"),
    ] {
        assert_eq!(seconds(value), shown);
    }
    for example in forms["s"]["examples_ms"].as_array().unwrap() {
        let ms = example[0].as_u64().unwrap();
        assert_eq!(
            seconds_text(Duration::from_millis(ms)),
            format!("{} s", example[1].as_str().unwrap())
        );
    }
    for example in forms["s1"]["examples_ms"].as_array().unwrap() {
        let ms = example[0].as_i64().unwrap();
        assert_eq!(seconds(ms), format!("{} s", example[1].as_str().unwrap()));
    }
}

#[test]
fn every_template_is_the_clients_words() {
    let mut checked = 0;
    for file in ["registry_errors.json", "edge_traces.json"] {
        let doc = vectors(file);
        for entry in doc["words"].as_array().unwrap() {
            let name = entry["name"].as_str().unwrap();
            for face in ["rust", "rust_async"] {
                let template = match entry.get(face) {
                    Some(Value::String(t)) => t.as_str(),
                    // rust_async: absent when it is the rust face's.
                    None if face == "rust_async" => continue,
                    Some(Value::Null) => continue,
                    other => panic!("{name}: {face} is {other:?}"),
                };
                let mut values = samples(template);
                if name == "needs_0_7_0" {
                    let message = "column \"lo_t\" does not exist".to_string();
                    values.insert("message".into(), Sample::Text(message));
                }
                if file == "edge_traces.json" && template.contains("{grant}") {
                    let grant = edge_window(&Values::new()).to_string();
                    values.insert("grant".into(), Sample::Text(grant));
                }
                for (spot, _) in spots(template) {
                    assert!(
                        spot == "grant" || entry["placeholders"].get(&spot).is_some(),
                        "{name}: {spot} is not declared"
                    );
                }
                assert_eq!(
                    shown(file, name, face, &values),
                    render(template, &values),
                    "{file}: {name} ({face})"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 25, "{checked} templates");
}
