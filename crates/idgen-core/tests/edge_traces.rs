//! Runs every case of tests/vectors/edge_traces.json (the edge device's offline rule; its
//! "format" key says what a case is) against `idgen_core::grant::edge`.

use idgen_core::grant::edge::{EdgeError, EdgeId, EdgeKind, EdgeState, XidSeed};
use idgen_core::snowflake;
use idgen_core::xid::Xid;
mod common;
use common::json::{vectors, Json};
use common::words;

fn nullable_int(o: &Json, key: &str) -> Option<i64> {
    match o.get(key) {
        None | Some(Json::Null) => None,
        Some(_) => Some(o.int(key)),
    }
}

fn hex(id: &Xid) -> String {
    id.0.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Xid {
    assert_eq!(text.len(), 24, "{text}");
    let mut b = [0u8; 12];
    for (i, byte) in b.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap();
    }
    Xid(b)
}

fn id_json(id: EdgeId) -> Json {
    match id {
        EdgeId::Xid(x) => Json::Str(hex(&x)),
        EdgeId::Snowflake(n) => Json::Int(n.into()),
    }
}

fn slot_of(id: EdgeId) -> i64 {
    match id {
        EdgeId::Xid(x) => {
            let [a, b, c] = x.machine();
            u32::from_be_bytes([0, a, b, c]).into()
        }
        EdgeId::Snowflake(n) => snowflake::worker(n).unwrap().into(),
    }
}

/// The case's starting state, and the seed of an xid12 case.
fn state(case: &Json) -> (EdgeState, XidSeed) {
    let st = case.get("state").expect("state");
    let xid = case.str("kind") == "xid12";
    let kind = if xid {
        assert_eq!(nullable_int(st, "epoch_ms"), None);
        EdgeKind::Xid12
    } else {
        EdgeKind::Snowflake {
            epoch_ms: st.int("epoch_ms"),
        }
    };
    let last_id = match st.get("last_id") {
        None | Some(Json::Null) => None,
        Some(Json::Str(t)) if xid => Some(EdgeId::Xid(unhex(t))),
        Some(_) if !xid => Some(EdgeId::Snowflake(st.int("last_id"))),
        other => panic!("last_id {other:?}"),
    };
    let seed = if xid {
        XidSeed {
            pid: u16::try_from(case.int("pid")).unwrap(),
            counter: u32::try_from(case.int("counter")).unwrap(),
        }
    } else {
        XidSeed::default()
    };
    let s = EdgeState {
        kind,
        slot: st.int("slot"),
        lo_us: st.int("lo_us"),
        hi_us: st.int("hi_us"),
        last_id,
        last_id_us: nullable_int(st, "last_id_us"),
        cloned: st.opt_str("cloned").is_some(),
    };
    (s, seed)
}

/// Runs one case; returns how many clock readings it made, and the refusal names it saw.
fn run_case(case: &Json, seen: &mut Vec<String>) -> usize {
    let name = case.str("name");
    let (mut s, seed) = state(case);
    let mut calls = 0;
    for (n, step) in case.arr("steps").iter().enumerate() {
        if let Some(r) = step.get("renew") {
            s.hi_us = r.int("hi_us");
            continue;
        }
        let expect = step.get("expect").expect("expect");
        if step.get("release") == Some(&Json::Bool(true)) {
            s.hi_us = s.release_end();
            assert_eq!(s.hi_us, expect.int("hi_us"), "{name}, step {n}: release");
            continue;
        }
        calls += 1;
        let got = s.next(step.int("now_us"), seed);
        match (got, expect.opt_str("refused")) {
            (Ok(made), None) => {
                assert_eq!(
                    id_json(made.id),
                    *expect.get("id").unwrap(),
                    "{name}, step {n}"
                );
                assert_eq!(
                    made.id_time_us,
                    expect.int("last_id_us"),
                    "{name}, step {n}"
                );
                assert_eq!(slot_of(made.id), s.slot, "{name}, step {n}: the slot");
                assert!(
                    s.lo_us <= made.id_time_us && made.id_time_us < s.hi_us,
                    "{name}, step {n}: outside the window"
                );
                assert!(
                    s.last_id.is_none_or(|m| made.id > m),
                    "{name}, step {n}: not above the mark"
                );
                s = s.with_mark(made);
            }
            (Err(EdgeError::Refused(r)), Some(want)) => {
                assert_eq!(r.name(), want, "{name}, step {n}");
                seen.push(want.to_string());
            }
            (got, want) => panic!("{name}, step {n}: got {got:?}, want {want:?} / {expect:?}"),
        }
    }
    calls
}

#[test]
fn every_trace() {
    let doc = vectors("edge_traces.json");
    assert!(matches!(doc.get("format"), Some(Json::Arr(_))));
    let cases = doc.arr("cases");
    let mut seen = Vec::new();
    let calls: usize = cases.iter().map(|c| run_case(c, &mut seen)).sum();
    assert!(calls >= 50, "{calls} calls");
    // Every refusal is pinned, and named in the file's table.
    let Some(Json::Obj(refusals)) = doc.get("refusals") else {
        panic!("no refusals")
    };
    for name in ["cloned", "clock_before_window", "window_ended", "used_up"] {
        assert!(seen.iter().any(|s| s == name), "no case refuses {name}");
        assert!(refusals.contains_key(name), "{name} not in refusals");
    }
    let kinds: Vec<&str> = cases.iter().map(|c| c.str("kind")).collect();
    assert!(kinds.contains(&"snowflake") && kinds.contains(&"xid12"));
}

#[test]
fn the_words_of_every_face() {
    let edge = vectors("edge_traces.json");
    let registry = vectors("registry_errors.json");
    let Some(Json::Obj(forms)) = registry.get("forms") else {
        panic!("no forms")
    };
    let forms = forms.keys().cloned().collect();
    let names = words::check(&edge, &["message", "python", "rust"], &forms);
    // Each refusal has words of its own name, and every face shows it.
    let Some(Json::Obj(refusals)) = edge.get("refusals") else {
        panic!("no refusals")
    };
    for refusal in refusals.keys() {
        let entry = edge
            .arr("words")
            .iter()
            .find(|w| w.str("name") == refusal)
            .unwrap_or_else(|| panic!("no words for the refusal {refusal}"));
        for face in ["message", "python", "rust"] {
            assert!(entry.opt_str(face).is_some(), "{refusal}: no {face} words");
        }
    }
    assert!(names.iter().any(|n| n == "grant"));
}
