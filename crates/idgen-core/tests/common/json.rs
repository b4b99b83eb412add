//! A small reader of the JSON the shared vectors (tests/vectors/) use: objects, arrays,
//! strings (escapes included), integers, true/false/null. The core crate has no JSON
//! dependency.

#![allow(dead_code)]

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.get(key),
            _ => None,
        }
    }
    pub fn int(&self, key: &str) -> i64 {
        match self.get(key) {
            Some(Json::Int(v)) => i64::try_from(*v).expect("an i64"),
            other => panic!("{key}: not an integer: {other:?}"),
        }
    }
    pub fn opt_int(&self, key: &str) -> Option<i64> {
        self.get(key).map(|_| self.int(key))
    }
    pub fn str(&self, key: &str) -> &str {
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
    fn hex4(&mut self) -> u32 {
        let digits = std::str::from_utf8(&self.text[self.at..self.at + 4]).unwrap();
        self.at += 4;
        u32::from_str_radix(digits, 16).expect("four hex digits")
    }

    /// The character of `\uXXXX` (after the `u`), and of its low surrogate `\uXXXX` if any.
    fn unicode_escape(&mut self) -> char {
        let high = self.hex4();
        if !(0xd800..0xdc00).contains(&high) {
            return char::from_u32(high).expect("a character");
        }
        assert_eq!(&self.text[self.at..self.at + 2], b"\\u", "a low surrogate");
        self.at += 2;
        let low = self.hex4();
        char::from_u32(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00)).expect("a character")
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
                                b'r' => b'\r',
                                b'b' => 8,
                                b'f' => 12,
                                b'u' => {
                                    let c = self.unicode_escape();
                                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                                    continue;
                                }
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

pub fn parse(text: &str) -> Json {
    let mut r = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    let v = r.value();
    r.skip_ws();
    assert_eq!(r.at, text.len(), "trailing text after the JSON value");
    v
}

impl Json {
    pub fn arr(&self, key: &str) -> &[Json] {
        match self.get(key) {
            Some(Json::Arr(items)) => items,
            other => panic!("{key}: not an array: {other:?}"),
        }
    }
    pub fn opt_str(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            None | Some(Json::Null) => None,
            Some(_) => Some(self.str(key)),
        }
    }
    pub fn as_str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            other => panic!("not a string: {other:?}"),
        }
    }
}

/// The file `name` of tests/vectors/, read.
pub fn vectors(name: &str) -> Json {
    let path = format!("{}/../../tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    parse(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")))
}
