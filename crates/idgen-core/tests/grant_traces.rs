//! Runs every case of tests/vectors/grant_traces.json (the shared traces of the grant-bound
//! generators; its "format" key says what a case is) against `idgen_core::grant`.
//!
//! The core crate has no JSON dependency: `common/json.rs` reads it.

use idgen_core::grant::{GrantError, GrantStep, SnowflakeGrant, Window, XidGrant};
use idgen_core::snowflake::{self, SnowflakeError};
use idgen_core::xid::Xid;
mod common;
use common::json::{parse, Json};

fn error_name(e: &GrantError) -> String {
    match e {
        GrantError::ClockBeforeWindow { .. } => "clock_before_window".into(),
        GrantError::Snowflake(SnowflakeError::ClockMovedBack { .. }) => "clock_moved_back".into(),
        other => format!("{other:?}"),
    }
}

fn hex(id: &Xid) -> String {
    id.0.iter().map(|b| format!("{b:02x}")).collect()
}

/// One generator of either kind, with its outcomes in the traces' terms.
enum Gen {
    Snowflake(SnowflakeGrant),
    Xid(XidGrant, u16),
}

/// What a call gave: an id (its JSON form, its slot, id-time and a number that orders ids), a
/// wait, a renewal or an error name.
#[derive(Debug, PartialEq)]
enum Outcome {
    Id {
        json: Json,
        slot: i64,
        time: i64,
        order: u128,
    },
    WaitUntil(i64),
    Renew,
    Error(String),
}

impl Gen {
    fn call(&mut self, now: i64, counter: u32) -> Outcome {
        match self {
            Gen::Snowflake(g) => match g.next(now) {
                Ok(GrantStep::Issued(id)) => {
                    let p = snowflake::decode(id).unwrap();
                    Outcome::Id {
                        json: Json::Int(id.into()),
                        slot: p.worker.into(),
                        time: p.ms_since_epoch as i64,
                        order: id as u128,
                    }
                }
                Ok(GrantStep::WaitUntil(t)) => Outcome::WaitUntil(t),
                Ok(GrantStep::Renew) => Outcome::Renew,
                Err(e) => Outcome::Error(error_name(&e)),
            },
            Gen::Xid(g, pid) => match g.next(now, *pid, counter) {
                Ok(GrantStep::Issued(id)) => {
                    let [a, b, c] = id.machine();
                    Outcome::Id {
                        json: Json::Str(hex(&id)),
                        slot: i64::from(u32::from_be_bytes([0, a, b, c])),
                        time: id.time().into(),
                        order: id.0.iter().fold(0u128, |n, b| n << 8 | u128::from(*b)),
                    }
                }
                Ok(GrantStep::WaitUntil(t)) => Outcome::WaitUntil(t),
                Ok(GrantStep::Renew) => Outcome::Renew,
                Err(e) => Outcome::Error(error_name(&e)),
            },
        }
    }

    fn rebind(&mut self, slot: i64, window: Window) {
        match self {
            Gen::Snowflake(g) => g.rebind(slot, window).unwrap(),
            Gen::Xid(g, _) => g.rebind(slot, window).unwrap(),
        }
    }
}

fn expected(expect: &Json) -> Outcome {
    if let Some(id) = expect.get("id") {
        return Outcome::Id {
            json: id.clone(),
            slot: 0,
            time: 0,
            order: 0,
        };
    }
    if let Some(t) = expect.opt_int("wait_until") {
        return Outcome::WaitUntil(t);
    }
    if expect.get("renew") == Some(&Json::Bool(true)) {
        return Outcome::Renew;
    }
    Outcome::Error(expect.str("error").to_string())
}

fn run_case(case: &Json) -> usize {
    let name = case.str("name");
    let mut slot = case.int("slot");
    let mut window = Window::new(case.int("lo"), case.int("hi"));
    let max_wait = case.int("max_wait");
    let mut gen = match case.str("kind") {
        "snowflake" => Gen::Snowflake(
            SnowflakeGrant::new(case.int("epoch_ms"), slot, window, max_wait).unwrap(),
        ),
        "xid12" => Gen::Xid(
            XidGrant::new(slot, window, max_wait).unwrap(),
            u16::try_from(case.int("pid")).unwrap(),
        ),
        other => panic!("{name}: unknown kind {other}"),
    };
    let Some(Json::Arr(steps)) = case.get("steps") else {
        panic!("{name}: no steps")
    };
    let mut last_order: Option<u128> = None;
    let mut calls = 0;
    for (n, step) in steps.iter().enumerate() {
        if let Some(r) = step.get("rebind") {
            slot = r.int("slot");
            window = Window::new(r.int("lo"), r.int("hi"));
            gen.rebind(slot, window);
            continue;
        }
        let now = step.int("now");
        let counter = step.opt_int("counter").unwrap_or(0);
        let repeat = step.opt_int("repeat").unwrap_or(1);
        let want = expected(step.get("expect").expect("expect"));
        for i in 0..repeat {
            let c = ((counter + i) & 0xff_ffff) as u32;
            let got = gen.call(now, c);
            calls += 1;
            if let Outcome::Id {
                slot: s,
                time,
                order,
                ..
            } = &got
            {
                assert_eq!(*s, slot, "{name}, step {n}: the id's slot");
                assert!(
                    window.contains(*time),
                    "{name}, step {n}: id-time {time} outside {window:?}"
                );
                assert!(
                    last_order.is_none_or(|l| *order > l),
                    "{name}, step {n}: the id is not above the one before"
                );
                last_order = Some(*order);
            } else if i + 1 < repeat {
                panic!("{name}, step {n}, call {i}: {got:?} before the last repeat");
            }
            if i + 1 == repeat {
                match (&got, &want) {
                    (Outcome::Id { json: a, .. }, Outcome::Id { json: b, .. }) => {
                        assert_eq!(a, b, "{name}, step {n}")
                    }
                    _ => assert_eq!(got, want, "{name}, step {n}"),
                }
            }
        }
    }
    calls
}

#[test]
fn every_trace() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/vectors/grant_traces.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc = parse(&text);
    assert!(matches!(doc.get("format"), Some(Json::Arr(_))));
    let Some(Json::Arr(cases)) = doc.get("cases") else {
        panic!("no cases")
    };
    let kinds: Vec<&str> = cases.iter().map(|c| c.str("kind")).collect();
    assert!(kinds.contains(&"snowflake") && kinds.contains(&"xid12"));
    let calls: usize = cases.iter().map(run_case).sum();
    assert!(calls > 4096);
}
