//! Runs every case of tests/vectors/grant_traces.json (the shared traces of the grant-bound
//! generators; its "format" key says what a case is) against `idgen_core::grant`.
//!
//! The core crate has no JSON dependency, so a small reader of the JSON this file uses (objects,
//! arrays, strings without unicode escapes, integers, true/false/null) is below.

use idgen_core::grant::{GrantError, GrantStep, SnowflakeGrant, Window, XidGrant};
use idgen_core::snowflake::{self, SnowflakeError};
use idgen_core::xid::Xid;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.get(key),
            _ => None,
        }
    }
    fn int(&self, key: &str) -> i64 {
        match self.get(key) {
            Some(Json::Int(v)) => i64::try_from(*v).expect("an i64"),
            other => panic!("{key}: not an integer: {other:?}"),
        }
    }
    fn opt_int(&self, key: &str) -> Option<i64> {
        self.get(key).map(|_| self.int(key))
    }
    fn str(&self, key: &str) -> &str {
        match self.get(key) {
            Some(Json::Str(s)) => s,
            other => panic!("{key}: not a string: {other:?}"),
        }
    }
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while self.at < self.text.len() && self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }
    fn peek(&mut self) -> u8 {
        self.skip_ws();
        *self.text.get(self.at).expect("unexpected end of JSON")
    }
    fn expect(&mut self, c: u8) {
        assert_eq!(self.peek() as char, c as char, "at byte {}", self.at);
        self.at += 1;
    }
    fn literal(&mut self, word: &str, value: Json) -> Json {
        assert!(
            self.text[self.at..].starts_with(word.as_bytes()),
            "at byte {}",
            self.at
        );
        self.at += word.len();
        value
    }
    fn value(&mut self) -> Json {
        match self.peek() {
            b'{' => {
                self.at += 1;
                let mut map = BTreeMap::new();
                if self.peek() == b'}' {
                    self.at += 1;
                    return Json::Obj(map);
                }
                loop {
                    let key = match self.value() {
                        Json::Str(s) => s,
                        other => panic!("object key {other:?}"),
                    };
                    self.expect(b':');
                    let v = self.value();
                    map.insert(key, v);
                    match self.peek() {
                        b',' => self.at += 1,
                        b'}' => {
                            self.at += 1;
                            return Json::Obj(map);
                        }
                        c => panic!("unexpected {:?} at byte {}", c as char, self.at),
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.peek() == b']' {
                    self.at += 1;
                    return Json::Arr(items);
                }
                loop {
                    items.push(self.value());
                    match self.peek() {
                        b',' => self.at += 1,
                        b']' => {
                            self.at += 1;
                            return Json::Arr(items);
                        }
                        c => panic!("unexpected {:?} at byte {}", c as char, self.at),
                    }
                }
            }
            b'"' => {
                self.at += 1;
                let mut out = Vec::new();
                loop {
                    let c = self.text[self.at];
                    self.at += 1;
                    match c {
                        b'"' => return Json::Str(String::from_utf8(out).expect("UTF-8")),
                        b'\\' => {
                            let e = self.text[self.at];
                            self.at += 1;
                            out.push(match e {
                                b'"' | b'\\' | b'/' => e,
                                b'n' => b'\n',
                                b't' => b'\t',
                                _ => panic!("unsupported escape \\{}", e as char),
                            });
                        }
                        _ => out.push(c),
                    }
                }
            }
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            _ => {
                let start = self.at;
                if self.text[self.at] == b'-' {
                    self.at += 1;
                }
                while self.at < self.text.len() && self.text[self.at].is_ascii_digit() {
                    self.at += 1;
                }
                let digits = std::str::from_utf8(&self.text[start..self.at]).unwrap();
                Json::Int(
                    digits
                        .parse()
                        .unwrap_or_else(|_| panic!("not an integer at byte {start}: {digits:?}")),
                )
            }
        }
    }
}

fn parse(text: &str) -> Json {
    let mut r = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    let v = r.value();
    r.skip_ws();
    assert_eq!(r.at, text.len(), "trailing text after the JSON value");
    v
}

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
