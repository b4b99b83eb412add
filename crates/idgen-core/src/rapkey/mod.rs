//! RAP semantic keys such as `ord.cn.sh.202407.8842-2` (docs/formats.md §3–4).
//!
//! A key is `type . seg [. seg]{0,4} - c`: a type of 2–8 letters `[a-z]`, 1 to 5 segments of
//! 1–32 characters `[a-z0-9]`, at most 128 characters in all, then `-` and one Damm check
//! character computed over the body (everything before the `-`). The lowercase form is the
//! only valid form; [`normalize`] and [`build`] lowercase their input, the others do not.
//!
//! The check character is Damm's algorithm over the quasigroup `x ∘ y = 2·(x − y) mod 37`
//! on the symbols `0-9` (0–9), `a-z` (10–35) and `.` (36); the check alphabet is
//! `0-9a-z~` (`~` = 36). It catches every single-character substitution and every adjacent
//! transposition of the body symbols, separators included.

use crate::words::{invalid_input, quoted, shown_char, Words};

/// Longest valid key, check character included.
pub const MAX_KEY_LEN: usize = 128;
/// Longest body: room is left for `-` and the check character.
pub const MAX_BODY_LEN: usize = MAX_KEY_LEN - 2;
/// Most segments after the type.
pub const MAX_SEGMENTS: usize = 5;
/// Shortest type.
pub const MIN_TYPE_LEN: usize = 2;
/// Longest type.
pub const MAX_TYPE_LEN: usize = 8;
/// Longest segment.
pub const MAX_SEGMENT_LEN: usize = 32;
/// Check characters, indexed by Damm interim value.
pub const CHECK_ALPHABET: &str = "0123456789abcdefghijklmnopqrstuvwxyz~";

/// Why a key, body, part or prefix was rejected: the kind of error and the data a message
/// needs (positions and lengths in characters), worded once by [`RapkeyError::words`]. A part (`value`, `kind`, `check`) is the
/// input's text, whole: whoever shows it bounds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RapkeyError {
    /// The key is empty (after trimming, for [`normalize`]).
    Empty,
    /// The key has more than [`MAX_KEY_LEN`] characters.
    KeyTooLong { len: usize },
    /// A body (or prefix) has more than [`MAX_BODY_LEN`] characters.
    BodyTooLong { len: usize },
    /// No `-` before the check character.
    MissingCheckSeparator,
    /// Nothing after the last `-`.
    MissingCheckChar,
    /// More than one character after the last `-`.
    ExtraCheckChars { check: String },
    /// The check character is not in `[0-9a-z~]`.
    InvalidCheckChar { found: char },
    /// The type does not have 2 to 8 characters (`len` 0: empty type).
    TypeLength { value: String, len: usize },
    /// The type has a character outside `[a-z]` (`position` is 1-based within the type).
    TypeChar {
        value: String,
        position: usize,
        found: char,
    },
    /// The type is not followed by any segment.
    MissingSegment { kind: String },
    /// More than [`MAX_SEGMENTS`] segments.
    TooManySegments { count: usize },
    /// A prefix to number under already has [`MAX_SEGMENTS`] segments: no room for the number.
    PrefixFull,
    /// Segment `index` (1-based) is empty.
    EmptySegment { index: usize },
    /// Segment `index` (1-based) has more than [`MAX_SEGMENT_LEN`] characters.
    SegmentTooLong {
        index: usize,
        value: String,
        len: usize,
    },
    /// Segment `index` has a character outside `[a-z0-9]` (`position` 1-based within it).
    SegmentChar {
        index: usize,
        value: String,
        position: usize,
        found: char,
    },
    /// The grammar holds but the check character does not match the body.
    WrongCheckChar { expected: char, found: char },
}

/// What was refused, which the message names: a key given as text (a type's input), or a
/// body, a part or a prefix given as an argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Given {
    /// A key, as given (before any trimming).
    Key(String),
    Body,
    Part,
    Prefix,
}

impl RapkeyError {
    /// True for a wrong check character (the key is well-formed), false for grammar errors.
    pub fn is_checksum(&self) -> bool {
        matches!(self, RapkeyError::WrongCheckChar { .. })
    }

    /// The message and DETAIL: `invalid input syntax for type rapkey: "key"` for a key,
    /// `invalid rapkey body|part|prefix` for an argument; the DETAIL is [`Self::detail`].
    pub fn words(&self, given: &Given) -> Words {
        let message = match given {
            Given::Key(key) => invalid_input("rapkey", key),
            Given::Body => "invalid rapkey body".to_string(),
            Given::Part => "invalid rapkey part".to_string(),
            Given::Prefix => "invalid rapkey prefix".to_string(),
        };
        Words::with_detail(message, self.detail())
    }

    /// Why a key, body, part or prefix is rejected, as a DETAIL sentence. Parts of the input
    /// are shown through [`quoted`], so never unbounded.
    pub fn detail(&self) -> String {
        use RapkeyError::*;
        match self {
            Empty => "Key is empty.".into(),
            KeyTooLong { len } => {
                format!("Key is too long: {len} characters (at most {MAX_KEY_LEN}).")
            }
            BodyTooLong { len } => format!(
                "Body is too long: {len} characters (at most {MAX_BODY_LEN}, leaving room for \
                 '-' and the check character)."
            ),
            MissingCheckSeparator => "Missing '-' before the check character.".into(),
            MissingCheckChar => "Missing check character after '-'.".into(),
            ExtraCheckChars { check } => format!(
                "Expected one check character after '-', found {}.",
                quoted(check)
            ),
            InvalidCheckChar { found } => format!(
                "Check character {} is not one of [0-9a-z~].",
                shown_char(*found)
            ),
            TypeLength { len: 0, .. } => "Type is empty.".into(),
            TypeLength { value, len } => format!(
                "Type {} is too {}: {len} letter{} (a type has {MIN_TYPE_LEN} to \
                 {MAX_TYPE_LEN} letters).",
                quoted(value),
                if *len < MIN_TYPE_LEN { "short" } else { "long" },
                if *len == 1 { "" } else { "s" }
            ),
            TypeChar {
                value,
                position,
                found,
            } => format!(
                "Type {} has a character outside [a-z]: {} at position {position}.",
                quoted(value),
                shown_char(*found)
            ),
            MissingSegment { kind } => format!(
                "Type {} must be followed by at least one segment.",
                quoted(kind)
            ),
            TooManySegments { count } => {
                format!("Too many segments: {count} (at most {MAX_SEGMENTS}).")
            }
            PrefixFull => format!(
                "The prefix already has {MAX_SEGMENTS} segments, the most a key has, so a \
                 number cannot be added to it."
            ),
            EmptySegment { index } => format!("Segment {index} is empty."),
            SegmentTooLong { index, value, len } => format!(
                "Segment {index} {} is too long: {len} characters (at most {MAX_SEGMENT_LEN}).",
                quoted(value)
            ),
            SegmentChar {
                index,
                value,
                position,
                found,
            } => format!(
                "Segment {index} {} has a character outside [a-z0-9]: {} at position \
                 {position}.",
                quoted(value),
                shown_char(*found)
            ),
            WrongCheckChar { expected, found } => format!(
                "Wrong check character: expected '{expected}', found {}.",
                shown_char(*found)
            ),
        }
    }
}

/// A validated key split into its parts (slices of the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    pub kind: &'a str,
    pub segments: Vec<&'a str>,
    pub check: char,
}

// ---------------------------------------------------------------------------------------
// Damm arithmetic

/// `x ∘ y = 2·(x − y) mod 37` for `x, y < 37`.
const fn damm_op(x: u8, y: u8) -> u8 {
    (2 * (x + 37 - y)) % 37
}

/// Value of a body symbol. Only called on grammar-checked bodies (`[a-z0-9.]`).
const fn symbol_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'z' => b - b'a' + 10,
        _ => 36, // '.'
    }
}

/// Value of a check character, `None` outside `[0-9a-z~]`.
fn check_value(c: char) -> Option<u8> {
    match c {
        '0'..='9' | 'a'..='z' => Some(symbol_value(c as u8)),
        '~' => Some(36),
        _ => None,
    }
}

fn damm_interim(body: &str) -> u8 {
    body.bytes().fold(0, |acc, b| damm_op(acc, symbol_value(b)))
}

fn check_char_of(interim: u8) -> char {
    CHECK_ALPHABET.as_bytes()[interim as usize] as char
}

// ---------------------------------------------------------------------------------------
// Grammar

/// First character of `lower` failing `ok`: (1-based position, the character in `orig`).
/// `orig` is `lower` before ASCII lowercasing, so byte offsets coincide.
fn first_bad(lower: &str, orig: &str, ok: impl Fn(char) -> bool) -> Option<(usize, char)> {
    lower
        .char_indices()
        .enumerate()
        .find(|(_, (_, c))| !ok(*c))
        .map(|(n, (at, c))| {
            let found = orig.get(at..).and_then(|s| s.chars().next()).unwrap_or(c);
            (n + 1, found)
        })
}

/// Checks a type; `orig` (same text before lowercasing) is what errors show.
fn check_type(lower: &str, orig: &str) -> Result<(), RapkeyError> {
    if let Some((position, found)) = first_bad(lower, orig, |c| c.is_ascii_lowercase()) {
        return Err(RapkeyError::TypeChar {
            value: orig.to_string(),
            position,
            found,
        });
    }
    if !(MIN_TYPE_LEN..=MAX_TYPE_LEN).contains(&lower.len()) {
        return Err(RapkeyError::TypeLength {
            value: orig.to_string(),
            len: lower.len(),
        });
    }
    Ok(())
}

/// Checks segment `index` (1-based); `orig` is what errors show.
fn check_segment(index: usize, lower: &str, orig: &str) -> Result<(), RapkeyError> {
    if lower.is_empty() {
        return Err(RapkeyError::EmptySegment { index });
    }
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if let Some((position, found)) = first_bad(lower, orig, ok) {
        return Err(RapkeyError::SegmentChar {
            index,
            value: orig.to_string(),
            position,
            found,
        });
    }
    if lower.len() > MAX_SEGMENT_LEN {
        return Err(RapkeyError::SegmentTooLong {
            index,
            value: orig.to_string(),
            len: lower.len(),
        });
    }
    Ok(())
}

/// Checks the parts of a body `type.seg…` (no length check). With `need_segment`, a bare
/// type is rejected; prefixes may be a bare type.
fn check_body(body: &str, need_segment: bool) -> Result<(), RapkeyError> {
    let mut parts = body.split('.');
    let kind = parts.next().unwrap_or("");
    check_type(kind, kind)?;
    let mut count = 0;
    for seg in parts {
        count += 1;
        if count > MAX_SEGMENTS {
            return Err(RapkeyError::TooManySegments {
                count: body.split('.').count() - 1,
            });
        }
        check_segment(count, seg, seg)?;
    }
    if count == 0 && need_segment {
        return Err(RapkeyError::MissingSegment {
            kind: kind.to_string(),
        });
    }
    Ok(())
}

/// Trims and lowercases separate parts, validates them and joins them into a body.
fn body_from_parts(
    kind: &str,
    segments: &[&str],
    need_segment: bool,
) -> Result<String, RapkeyError> {
    let kind_orig = kind.trim();
    let kind_lower = kind_orig.to_ascii_lowercase();
    check_type(&kind_lower, kind_orig)?;
    if segments.len() > MAX_SEGMENTS {
        return Err(RapkeyError::TooManySegments {
            count: segments.len(),
        });
    }
    if segments.is_empty() && need_segment {
        return Err(RapkeyError::MissingSegment { kind: kind_lower });
    }
    let mut body = kind_lower;
    for (i, seg) in segments.iter().enumerate() {
        let orig = seg.trim();
        let lower = orig.to_ascii_lowercase();
        check_segment(i + 1, &lower, orig)?;
        body.push('.');
        body.push_str(&lower);
    }
    if body.len() > MAX_BODY_LEN {
        return Err(RapkeyError::BodyTooLong { len: body.len() });
    }
    Ok(body)
}

// ---------------------------------------------------------------------------------------
// Public API

/// Check character for `body` (`type.seg…`, without `-c`). The body must be grammatical and
/// lowercase (no trimming or lowercasing here) and at most [`MAX_BODY_LEN`] characters.
pub fn check_char(body: &str) -> Result<char, RapkeyError> {
    let len = body.chars().count();
    if len > MAX_BODY_LEN {
        return Err(RapkeyError::BodyTooLong { len });
    }
    check_body(body, true)?;
    Ok(check_char_of(damm_interim(body)))
}

/// Full validation of a canonical key: grammar, then check character. The error says why.
pub fn validate(key: &str) -> Result<(), RapkeyError> {
    if is_valid(key) {
        return Ok(());
    }
    parse(key).map(|_| ())
}

/// True iff [`validate`] accepts `key`. Never panics, never allocates.
pub fn is_valid(key: &str) -> bool {
    is_valid_bytes(key.as_bytes())
}

/// Symbol value of each byte in a body (`0-9`, `a-z`, `.`), `NOT_A_SYMBOL` elsewhere.
const NOT_A_SYMBOL: u8 = 0x80;
const SYMBOL_VALUE: [u8; 256] = {
    let mut table = [NOT_A_SYMBOL; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_digit() || c.is_ascii_lowercase() || c == b'.' {
            table[b] = symbol_value(c);
        }
        b += 1;
    }
    table
};

/// The same verdict as [`parse`] (a byte outside ASCII makes a key invalid), without
/// allocating and with few branches: this is the hot path of the domain check. [`parse`] is
/// what explains a "no".
///
/// The Damm chain `i' = 2·(i − v) mod 37` unrolls to `i_n = −Σ 2^(n−k)·v_k mod 37`, so it is
/// accumulated as `t' = 2·(t + v)` with no division per character; the key is valid when
/// `i_n ∘ c = 0`, that is when `t + c ≡ 0 (mod 37)`.
pub fn is_valid_bytes(key: &[u8]) -> bool {
    let n = key.len();
    // The shortest key is "ab.c-x".
    if !(6..=MAX_KEY_LEN).contains(&n) || key[n - 2] != b'-' {
        return false;
    }
    let body = &key[..n - 2];
    let mut t: u64 = 0;
    let mut invalid = 0u8;
    for chunk in body.chunks(48) {
        // Values are below 37, or 128 for a byte that is no symbol (rejected below): 48
        // doublings from t < 37 stay below 2^57.
        for &b in chunk {
            let value = SYMBOL_VALUE[b as usize];
            invalid |= value;
            t = 2 * (t + u64::from(value));
        }
        t %= 37;
    }
    if invalid & NOT_A_SYMBOL != 0 {
        return false;
    }
    let mut parts = body.split(|&b| b == b'.');
    let kind = parts.next().unwrap_or_default();
    if !(MIN_TYPE_LEN..=MAX_TYPE_LEN).contains(&kind.len())
        || !kind.iter().all(u8::is_ascii_lowercase)
    {
        return false;
    }
    let mut segments = 0;
    for segment in parts {
        segments += 1;
        if segment.is_empty() || segment.len() > MAX_SEGMENT_LEN {
            return false;
        }
    }
    if !(1..=MAX_SEGMENTS).contains(&segments) {
        return false;
    }
    match check_value(key[n - 1] as char) {
        Some(c) => (t + u64::from(c)).is_multiple_of(37),
        None => false,
    }
}

/// Validates `key` and splits it into type, segments and check character.
pub fn parse(key: &str) -> Result<ParsedKey<'_>, RapkeyError> {
    if key.is_empty() {
        return Err(RapkeyError::Empty);
    }
    let len = key.chars().count();
    if len > MAX_KEY_LEN {
        return Err(RapkeyError::KeyTooLong { len });
    }
    let (body, check) = key
        .rsplit_once('-')
        .ok_or(RapkeyError::MissingCheckSeparator)?;
    check_body(body, true)?;
    let mut check_chars = check.chars();
    let found = match (check_chars.next(), check_chars.next()) {
        (None, _) => return Err(RapkeyError::MissingCheckChar),
        (Some(c), None) => c,
        (Some(_), Some(_)) => {
            return Err(RapkeyError::ExtraCheckChars {
                check: check.to_string(),
            });
        }
    };
    let value = check_value(found).ok_or(RapkeyError::InvalidCheckChar { found })?;
    let interim = damm_interim(body);
    if damm_op(interim, value) != 0 {
        return Err(RapkeyError::WrongCheckChar {
            expected: check_char_of(interim),
            found,
        });
    }
    let mut parts = body.split('.');
    let kind = parts.next().unwrap_or("");
    Ok(ParsedKey {
        kind,
        segments: parts.collect(),
        check: found,
    })
}

/// Builds a key from a type and 1 to 5 segments: each part is trimmed and ASCII-lowercased,
/// then validated (errors name the part), and `-` plus the check character is appended.
pub fn build(kind: &str, segments: &[&str]) -> Result<String, RapkeyError> {
    let mut body = body_from_parts(kind, segments, true)?;
    let c = check_char_of(damm_interim(&body));
    body.push('-');
    body.push(c);
    Ok(body)
}

/// Canonical form of user input (SQL `to_rapkey`): trims whitespace, ASCII-lowercases,
/// validates.
pub fn normalize(input: &str) -> Result<String, RapkeyError> {
    let key = input.trim().to_ascii_lowercase();
    validate(&key)?;
    Ok(key)
}

/// Half-open byte range `[lo, hi)` of the valid keys under `prefix`, a type or
/// `type.seg1[.seg2…]` made of whole parts (trimmed and lowercased as a whole, then
/// validated strictly). Compare in C collation: `lo <= key AND key < hi`.
pub fn prefix_range(prefix: &str) -> Result<(String, String), RapkeyError> {
    Ok(range_of(&canonical_prefix(prefix)?))
}

/// Canonical form of a prefix (what [`prefix_range`] ranges over, SQL `rapkey_prefix_lo/hi`):
/// trimmed, lowercased, validated as whole parts.
pub fn canonical_prefix(prefix: &str) -> Result<String, RapkeyError> {
    let p = prefix.trim().to_ascii_lowercase();
    check_body(&p, false)?;
    if p.len() > MAX_BODY_LEN {
        return Err(RapkeyError::BodyTooLong { len: p.len() });
    }
    Ok(p)
}

/// A prefix that keys can be numbered under (`prefix.N-c`; SQL `rapkey_normalize_prefix`, which
/// `rapkey_next` calls): [`canonical_prefix`], with room for one more segment.
pub fn normalize_prefix(prefix: &str) -> Result<String, RapkeyError> {
    let p = canonical_prefix(prefix)?;
    if p.matches('.').count() >= MAX_SEGMENTS {
        return Err(RapkeyError::PrefixFull);
    }
    Ok(p)
}

/// [`prefix_range`] from separate parts (0 to 5 segments), trimmed and lowercased as in
/// [`build`]. Only the tests use it.
#[cfg(test)]
pub fn prefix_range_parts(kind: &str, segments: &[&str]) -> Result<(String, String), RapkeyError> {
    Ok(range_of(&body_from_parts(kind, segments, false)?))
}

/// A valid key under prefix `P` continues `P` with either `-c` (its body is `P`) or `.seg…`;
/// any other continuation is a digit or letter extending P's last part (`…202407` →
/// `…2024071`), which is not under `P`. In byte order `'-'` (0x2D) < `'.'` (0x2E) < `'/'`
/// (0x2F) < `'0'` (0x30) < `'a'` (0x61), so `[P + "-", P + "/")` holds exactly the keys
/// starting `P-` or `P.`: every string in it starts with `P` followed by `-` or `.`, and
/// `P0…`/`Pa…` sort at or after `P/`.
fn range_of(p: &str) -> (String, String) {
    (format!("{p}-"), format!("{p}/"))
}

#[cfg(test)]
mod tests;
