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
/// needs, no wording (the SQL glue words them). A part (`value`, `kind`, `check`) is the
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

impl RapkeyError {
    /// True for a wrong check character (the key is well-formed), false for grammar errors.
    pub fn is_checksum(&self) -> bool {
        matches!(self, RapkeyError::WrongCheckChar { .. })
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
    Ok(range_of(&normalize_prefix(prefix)?))
}

/// Canonical form of a prefix: trimmed, lowercased, validated as whole parts.
pub fn normalize_prefix(prefix: &str) -> Result<String, RapkeyError> {
    let p = prefix.trim().to_ascii_lowercase();
    check_body(&p, false)?;
    if p.len() > MAX_BODY_LEN {
        return Err(RapkeyError::BodyTooLong { len: p.len() });
    }
    Ok(p)
}

/// A prefix that keys can be numbered under (`prefix.N-c`): [`normalize_prefix`], with room
/// for one more segment.
pub fn numbering_prefix(prefix: &str) -> Result<String, RapkeyError> {
    let p = normalize_prefix(prefix)?;
    if p.matches('.').count() >= MAX_SEGMENTS {
        return Err(RapkeyError::PrefixFull);
    }
    Ok(p)
}

/// [`prefix_range`] from separate parts (0 to 5 segments), trimmed and lowercased as in
/// [`build`].
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
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numbering_prefix_needs_room_for_the_number() {
        assert_eq!(numbering_prefix(" ORD.cn.sh "), Ok("ord.cn.sh".to_string()));
        assert_eq!(
            numbering_prefix("ord.a.b.c.d"),
            Ok("ord.a.b.c.d".to_string())
        );
        assert_eq!(
            numbering_prefix("ord.a.b.c.d.e"),
            Err(RapkeyError::PrefixFull)
        );
        // As a range prefix the same five segments are fine.
        assert!(prefix_range("ord.a.b.c.d.e").is_ok());
    }

    const VECTORS: [&str; 4] = [
        "ord.cn.sh.202407.8842-2",
        "usr.cn.10001-x",
        "pay.us.ca.acme.202406.3311-h",
        "ord.cn.sh.202407.58-~",
    ];

    /// Every character a key can hold, plus the separators.
    const SYMBOLS: &str = "0123456789abcdefghijklmnopqrstuvwxyz.-~";

    fn err(key: &str) -> RapkeyError {
        validate(key).expect_err(key)
    }

    /// `body` plus its correct check character.
    fn key_of(body: &str) -> String {
        format!("{body}-{}", check_char(body).unwrap())
    }

    #[test]
    fn spec_vectors_are_valid() {
        for k in VECTORS {
            assert_eq!(validate(k), Ok(()), "{k}");
            assert!(is_valid(k));
            let (body, c) = k.rsplit_once('-').unwrap();
            assert_eq!(check_char(body).unwrap().to_string(), c);
        }
        assert_eq!(check_char("ord.cn.sh.202407.8842"), Ok('2'));
        assert_eq!(check_char("ord.cn.sh.202407.58"), Ok('~'));
    }

    #[test]
    fn damm_table_is_a_totally_antisymmetric_quasigroup() {
        for x in 0..37u8 {
            assert_eq!(damm_op(x, x), 0);
            let mut row = [false; 37];
            let mut col = [false; 37];
            for y in 0..37u8 {
                row[damm_op(x, y) as usize] = true;
                col[damm_op(y, x) as usize] = true;
                for c in 0..37u8 {
                    if x != y {
                        assert_ne!(damm_op(damm_op(c, x), y), damm_op(damm_op(c, y), x));
                    }
                }
            }
            assert!(row.iter().all(|&b| b) && col.iter().all(|&b| b));
        }
    }

    #[test]
    fn grammar_rejections() {
        use RapkeyError::*;
        assert_eq!(err(""), Empty);
        assert_eq!(err("ord"), MissingCheckSeparator);
        assert_eq!(err("ord-x"), MissingSegment { kind: "ord".into() });
        assert_eq!(err("ord.cn.sh.202407.8842"), MissingCheckSeparator);
        assert_eq!(
            err("ORD.cn.sh.202407.8842-2"),
            TypeChar {
                value: "ORD".into(),
                position: 1,
                found: 'O'
            }
        );
        assert_eq!(
            err("ord.cn.SH.202407.8842-2"),
            SegmentChar {
                index: 2,
                value: "SH".into(),
                position: 1,
                found: 'S'
            }
        );
        assert_eq!(
            err("ord.cn.sh.202407.8842-X"),
            InvalidCheckChar { found: 'X' }
        );
        assert_eq!(
            err("ord.cn.sh.202407.8842-3"),
            WrongCheckChar {
                expected: '2',
                found: '3'
            }
        );
        assert!(err("ord.cn.sh.202407.8842-3").is_checksum());
        assert_eq!(
            err(".ord.cn-2"),
            TypeLength {
                value: String::new(),
                len: 0
            }
        );
        assert_eq!(err("ord.cn.-2"), EmptySegment { index: 2 });
        assert_eq!(err("ord.cn..sh-2"), EmptySegment { index: 2 });
        assert_eq!(err("ord..cn-2"), EmptySegment { index: 1 });
        assert_eq!(err("ord.cn.sh.202407.8842-"), MissingCheckChar);
        assert_eq!(
            err("ord.cn.sh.202407.8842-22"),
            ExtraCheckChars { check: "22".into() }
        );
        assert_eq!(
            err("ord.cn.sh.202407.8842-2-2"),
            SegmentChar {
                index: 4,
                value: "8842-2".into(),
                position: 5,
                found: '-'
            }
        );
        assert_eq!(
            err("ord.cn.shé.1-2"),
            SegmentChar {
                index: 2,
                value: "shé".into(),
                position: 3,
                found: 'é'
            }
        );
        assert_eq!(err("ord.cn.sh.1-é"), InvalidCheckChar { found: 'é' });
        assert_eq!(
            err("ord.c\0n.1-2"),
            SegmentChar {
                index: 1,
                value: "c\0n".into(),
                position: 2,
                found: '\0'
            }
        );
        assert_eq!(err("ord.cn.1-\0"), InvalidCheckChar { found: '\0' });
        assert_eq!(err("ord.cn.1-."), InvalidCheckChar { found: '.' });
        assert_eq!(
            err("o.cn-2"),
            TypeLength {
                value: "o".into(),
                len: 1
            }
        );
        assert_eq!(
            err("ordersabc.cn-2"),
            TypeLength {
                value: "ordersabc".into(),
                len: 9
            }
        );
        assert_eq!(
            err("o1d.cn-2"),
            TypeChar {
                value: "o1d".into(),
                position: 2,
                found: '1'
            }
        );
        assert_eq!(err("ord.a.b.c.d.e.f-2"), TooManySegments { count: 6 });
        let seg33 = "a".repeat(33);
        assert_eq!(
            err(&format!("ord.{seg33}-2")),
            SegmentTooLong {
                index: 1,
                value: seg33.clone(),
                len: 33
            }
        );
        assert!(is_valid(&key_of(&format!("ord.{}", "a".repeat(32)))));
        // Whitespace is not trimmed by validate.
        assert_eq!(
            err(" ord.cn.sh.202407.8842-2"),
            TypeChar {
                value: " ord".into(),
                position: 1,
                found: ' '
            }
        );
        assert_eq!(
            err("ord.cn.sh.202407.8842-2 "),
            ExtraCheckChars { check: "2 ".into() }
        );
        for k in ["", "ord", "ord-x", "ORD.CN.1-2", "ord.cn.sh.202407.8842-3"] {
            assert!(!is_valid(k));
        }
    }

    #[test]
    fn length_limits() {
        // 128 characters exactly: type(8) + 4×(1+32) = 140 is too much, so shape it.
        let body = format!(
            "ordersab.{}.{}.{}.{}",
            "a".repeat(32),
            "b".repeat(32),
            "c".repeat(32),
            "d".repeat(18)
        );
        assert_eq!(body.len(), MAX_BODY_LEN);
        let key = key_of(&body);
        assert_eq!(key.len(), MAX_KEY_LEN);
        assert!(is_valid(&key));
        let long = format!("{body}e-{}", 'x');
        assert_eq!(err(&long), RapkeyError::KeyTooLong { len: 129 });
        assert_eq!(
            check_char(&format!("{body}e")),
            Err(RapkeyError::BodyTooLong { len: 127 })
        );
        let segs = [
            "a".repeat(32),
            "b".repeat(32),
            "c".repeat(32),
            "d".repeat(19),
        ];
        let segs: Vec<&str> = segs.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            build("ordersab", &segs),
            Err(RapkeyError::BodyTooLong { len: 127 })
        );
        // Huge and non-ASCII inputs never panic.
        let huge = "é".repeat(1_000_000);
        assert_eq!(err(&huge), RapkeyError::KeyTooLong { len: 1_000_000 });
        assert!(build("ord", &[&huge]).is_err());
        assert!(check_char(&huge).is_err());
        assert!(prefix_range(&huge).is_err());
        assert!(normalize(&huge).is_err());
        assert!(matches!(
            build("ord", &[&huge]),
            Err(RapkeyError::SegmentChar {
                index: 1,
                position: 1,
                found: 'é',
                ..
            })
        ));
        // 128 multibyte characters: within the length limit, rejected by grammar.
        assert!(matches!(
            err(&format!("{}.a-2", "é".repeat(124))),
            RapkeyError::TypeChar { .. }
        ));
    }

    #[test]
    fn check_char_requires_a_grammatical_body() {
        use RapkeyError::*;
        assert_eq!(
            check_char(""),
            Err(TypeLength {
                value: String::new(),
                len: 0
            })
        );
        assert_eq!(
            check_char("ord"),
            Err(MissingSegment { kind: "ord".into() })
        );
        assert_eq!(
            check_char("ord.cn-2"),
            Err(SegmentChar {
                index: 1,
                value: "cn-2".into(),
                position: 3,
                found: '-'
            })
        );
        assert!(check_char("ORD.cn").is_err());
        assert!(check_char("ord.cn.").is_err());
        assert!(check_char("ord.cn~").is_err());
    }

    #[test]
    fn errors_carry_their_data() {
        use RapkeyError::*;
        let e = |r: Result<String, RapkeyError>| r.unwrap_err();
        assert_eq!(
            e(build("ord", &["cn", "Sh!"])),
            SegmentChar {
                index: 2,
                value: "Sh!".into(),
                position: 3,
                found: '!'
            }
        );
        assert_eq!(
            e(build(" ", &["x"])),
            TypeLength {
                value: String::new(),
                len: 0
            }
        );
        assert_eq!(e(build("ord", &[])), MissingSegment { kind: "ord".into() });
        assert_eq!(
            e(build("ord", &["a", "b", "c", "d", "e", "f"])),
            TooManySegments { count: 6 }
        );
        assert_eq!(e(build("ord", &["a", " "])), EmptySegment { index: 2 });
        // Parts are kept whole, however long: the glue bounds what it shows.
        let long = "a".repeat(40);
        assert_eq!(
            err(&format!("ord.{long}-2")),
            SegmentTooLong {
                index: 1,
                value: long.clone(),
                len: 40
            }
        );
        assert_eq!(
            err(&format!("ord.{long}!-2")),
            SegmentChar {
                index: 1,
                value: format!("{long}!"),
                position: 41,
                found: '!'
            }
        );
        assert_eq!(
            err("ord.cn-2~x"),
            ExtraCheckChars {
                check: "2~x".into()
            }
        );
        for e in [
            err(""),
            err("ord.cn"),
            err("ord.cn-"),
            err("ord.cn-22"),
            err("ord.cn-A"),
            err("o.cn-2"),
            err("o1.cn-2"),
            err("ord-2"),
            err("a1.a.b.c.d.e.f-2"),
            err("ord..a-2"),
            err(&format!("ord.{}-2", "a".repeat(40))),
            err("ord.a!-2"),
            err("ord.cn.sh.202407.8842-3"),
            err(&"a".repeat(200)),
            check_char(&"a".repeat(200)).unwrap_err(),
        ] {
            assert_eq!(e.is_checksum(), matches!(e, WrongCheckChar { .. }), "{e:?}");
        }
    }

    #[test]
    fn build_normalize_parse_round_trip() {
        assert_eq!(
            build(" ORD ", &["CN", " sh", "202407 ", "8842"]).unwrap(),
            "ord.cn.sh.202407.8842-2"
        );
        assert_eq!(build("usr", &["cn", "10001"]).unwrap(), "usr.cn.10001-x");
        assert_eq!(
            build("pay", &["us", "ca", "acme", "202406", "3311"]).unwrap(),
            "pay.us.ca.acme.202406.3311-h"
        );
        assert_eq!(
            build("ord", &["cn.sh"]),
            Err(RapkeyError::SegmentChar {
                index: 1,
                value: "cn.sh".into(),
                position: 3,
                found: '.'
            })
        );
        assert_eq!(
            build("Or1", &["x"]),
            Err(RapkeyError::TypeChar {
                value: "Or1".into(),
                position: 3,
                found: '1'
            })
        );
        assert_eq!(
            normalize("  ORD.CN.SH.202407.8842-2\n").unwrap(),
            "ord.cn.sh.202407.8842-2"
        );
        assert_eq!(
            normalize("\tord.cn.sh.202407.58-~ ").unwrap(),
            "ord.cn.sh.202407.58-~"
        );
        assert_eq!(
            normalize(" ORD.CN.SH.202407.8842-3 "),
            Err(RapkeyError::WrongCheckChar {
                expected: '2',
                found: '3'
            })
        );
        assert_eq!(normalize("   "), Err(RapkeyError::Empty));
        assert_eq!(
            normalize("ORD. CN.1-2"),
            Err(RapkeyError::SegmentChar {
                index: 1,
                value: " cn".into(),
                position: 1,
                found: ' '
            })
        );
        for k in VECTORS {
            let p = parse(k).unwrap();
            let body = k.rsplit_once('-').unwrap().0;
            assert_eq!(p.kind, body.split('.').next().unwrap());
            assert_eq!(build(p.kind, &p.segments).unwrap(), k);
            assert_eq!(normalize(&k.to_ascii_uppercase()).unwrap(), k);
        }
        let p = parse("ord.cn.sh.202407.8842-2").unwrap();
        assert_eq!(
            p,
            ParsedKey {
                kind: "ord",
                segments: vec!["cn", "sh", "202407", "8842"],
                check: '2'
            }
        );
        assert!(parse("ord.cn.sh.202407.8842-3").is_err());
    }

    fn in_range(key: &str, (lo, hi): &(String, String)) -> bool {
        lo.as_str() <= key && key < hi.as_str()
    }

    #[test]
    fn prefix_range_is_exact() {
        let r = prefix_range("ord.cn.sh.202407").unwrap();
        assert_eq!(
            r,
            (
                "ord.cn.sh.202407-".to_string(),
                "ord.cn.sh.202407/".to_string()
            )
        );
        assert_eq!(
            prefix_range_parts(" ORD", &["cn ", "SH", "202407"]).unwrap(),
            r
        );
        assert_eq!(prefix_range(" ORD.CN.SH.202407 ").unwrap(), r);
        let under = [
            "ord.cn.sh.202407",
            "ord.cn.sh.202407.0",
            "ord.cn.sh.202407.8842",
            "ord.cn.sh.202407.58",
            "ord.cn.sh.202407.zzzz",
            "ord.cn.sh.202407.0.0",
            "ord.cn.sh.202407.z.zzzzzzzz",
        ];
        let not_under = [
            "ord.cn.sh.2024071",
            "ord.cn.sh.2024071.1",
            "ord.cn.sh.202407a.1",
            "ord.cn.sh.20240",
            "ord.cn.sh.20240.7",
            "ord.cn.sh.202406.9999",
            "ord.cn.sh.202408",
            "ord.cn.sh.202408.0",
            "ord.cn.sh",
            "ord.cn.sh0.202407.1",
            "ord.cn.si.202407.1",
            "ord.cn.sg.202407.1",
            "ord.cn.sh0",
            "ord.cn",
            "orda.cn.sh.202407.1",
            "or.cn.sh.202407.1",
            "usr.cn.sh.202407.1",
        ];
        for b in under {
            assert!(in_range(&key_of(b), &r), "{b} should be under");
        }
        for b in not_under {
            assert!(!in_range(&key_of(b), &r), "{b} should not be under");
        }
        // A bare type prefix.
        let t = prefix_range("ord").unwrap();
        assert!(in_range(&key_of("ord.a"), &t));
        assert!(in_range(&key_of("ord.zzz.9"), &t));
        assert!(!in_range(&key_of("orda.a"), &t));
        assert!(!in_range(&key_of("or.zzzz"), &t));
        assert!(!in_range(&key_of("ore.a"), &t));
        assert_eq!(prefix_range_parts("ord", &[]).unwrap(), t);
        // Prefixes made of whole, valid parts only.
        assert!(prefix_range("ord.").is_err());
        assert!(prefix_range("ord.cn.sh.202407.8842-2").is_err());
        assert!(prefix_range("ord..cn").is_err());
        assert!(prefix_range("").is_err());
        assert!(prefix_range("o").is_err());
        assert!(prefix_range("ord.a.b.c.d.e.f").is_err());
        assert!(prefix_range("ord.a.b.c.d.e").is_ok());
        assert!(prefix_range_parts("ord", &["a!"]).is_err());
    }

    // -----------------------------------------------------------------------------------
    // Property tests

    fn parts_strategy() -> impl Strategy<Value = (String, Vec<String>)> {
        (
            "[a-z]{2,8}",
            prop::collection::vec("[a-z0-9]{1,32}", 1..=MAX_SEGMENTS),
        )
            .prop_filter("body fits", |(t, segs)| {
                t.len() + segs.iter().map(|s| s.len() + 1).sum::<usize>() <= MAX_BODY_LEN
            })
    }

    fn body_of(kind: &str, segs: &[String]) -> String {
        let mut b = kind.to_string();
        for s in segs {
            b.push('.');
            b.push_str(s);
        }
        b
    }

    fn key_strategy() -> impl Strategy<Value = String> {
        parts_strategy().prop_map(|(t, s)| key_of(&body_of(&t, &s)))
    }

    /// Keys from few, overlapping pieces, so prefixes are often shared or extended.
    fn small_parts() -> impl Strategy<Value = Vec<String>> {
        let piece = prop::sample::select(vec!["1", "12", "2", "a", "a1", "a0", "z"]);
        (
            prop::sample::select(vec!["ab", "abc", "ac", "b"]),
            prop::collection::vec(piece, 0..=MAX_SEGMENTS),
        )
            .prop_map(|(t, s)| std::iter::once(t).chain(s).map(String::from).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn every_substitution_is_rejected(key in key_strategy()) {
            prop_assert!(is_valid(&key));
            let bytes = key.as_bytes();
            for i in 0..bytes.len() {
                for s in SYMBOLS.bytes().filter(|&s| s != bytes[i]) {
                    let mut m = bytes.to_vec();
                    m[i] = s;
                    let m = String::from_utf8(m).unwrap();
                    prop_assert!(validate(&m).is_err(), "{} accepted (from {})", m, key);
                }
            }
        }

        #[test]
        fn every_adjacent_transposition_is_rejected(key in key_strategy()) {
            let bytes = key.as_bytes();
            for i in 0..bytes.len() - 1 {
                if bytes[i] != bytes[i + 1] {
                    let mut m = bytes.to_vec();
                    m.swap(i, i + 1);
                    let m = String::from_utf8(m).unwrap();
                    prop_assert!(validate(&m).is_err(), "{} accepted (from {})", m, key);
                }
            }
        }

        #[test]
        fn build_yields_valid_keys((kind, segs) in parts_strategy()) {
            let refs: Vec<&str> = segs.iter().map(|s| s.as_str()).collect();
            let key = build(&kind, &refs).unwrap();
            prop_assert_eq!(validate(&key), Ok(()));
            let body = body_of(&kind, &segs);
            prop_assert_eq!(&key, &format!("{}-{}", body, check_char(&body).unwrap()));
            // Case and surrounding whitespace do not matter to build and normalize.
            let upper: Vec<String> = segs.iter().map(|s| format!(" {} ", s.to_ascii_uppercase())).collect();
            let upper: Vec<&str> = upper.iter().map(|s| s.as_str()).collect();
            prop_assert_eq!(&build(&kind.to_ascii_uppercase(), &upper).unwrap(), &key);
            prop_assert_eq!(&normalize(&format!(" {} ", key.to_ascii_uppercase())).unwrap(), &key);
            let p = parse(&key).unwrap();
            prop_assert_eq!(p.kind, kind.as_str());
            prop_assert_eq!(p.segments, refs);
        }

        #[test]
        fn check_char_agrees_with_validate((kind, segs) in parts_strategy(), c in prop::sample::select(CHECK_ALPHABET.chars().collect::<Vec<_>>())) {
            let body = body_of(&kind, &segs);
            let expected = check_char(&body).unwrap();
            let key = format!("{body}-{c}");
            if c == expected {
                prop_assert_eq!(validate(&key), Ok(()));
            } else {
                prop_assert_eq!(validate(&key), Err(RapkeyError::WrongCheckChar { expected, found: c }));
            }
        }

        #[test]
        fn prefix_range_matches_part_prefixes(a in small_parts(), b in small_parts(), n in 0usize..=MAX_SEGMENTS) {
            let n = n.min(a.len() - 1);
            let prefix = a[..=n].join(".");
            let segs: Vec<&str> = a[1..=n].iter().map(|s| s.as_str()).collect();
            if a[0].len() < MIN_TYPE_LEN {
                prop_assert!(prefix_range(&prefix).is_err());
                return Ok(());
            }
            let r = prefix_range(&prefix).unwrap();
            prop_assert_eq!(&prefix_range_parts(&a[0], &segs).unwrap(), &r);
            for parts in [&a, &b] {
                if parts.len() < 2 || parts[0].len() < 2 {
                    continue; // not a valid key
                }
                let key = key_of(&parts.join("."));
                let expected = parts.len() > n && parts[..=n] == a[..=n];
                prop_assert_eq!(in_range(&key, &r), expected, "{} in {:?}", key, r);
            }
        }

        #[test]
        fn arbitrary_input_never_panics(s in "\\PC{0,140}", bytes in prop::collection::vec(any::<u8>(), 0..140)) {
            let lossy = String::from_utf8_lossy(&bytes).into_owned();
            for x in [s.as_str(), lossy.as_str()] {
                let _ = validate(x);
                let _ = check_char(x);
                let _ = normalize(x);
                let _ = prefix_range(x);
                let _ = build(x, &[x, x]);
                let _ = prefix_range_parts(x, &[x]);
            }
        }
    }

    proptest! {
        #[test]
        fn unrolled_damm_matches_the_chain(body in "[a-z0-9.]{1,126}") {
            let t = body.bytes().fold(0u64, |t, b| (2 * (t + u64::from(symbol_value(b)))) % 37);
            prop_assert_eq!((37 - t) % 37, u64::from(damm_interim(&body)));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn fast_check_agrees_with_parse(key in "[a-z0-9.~A-Z-]{0,40}") {
            prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{}", key);
        }

        #[test]
        fn fast_check_agrees_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..140)) {
            let key = String::from_utf8_lossy(&bytes);
            prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{:?}", key);
        }

        #[test]
        fn fast_check_agrees_near_the_length_limit(
            segs in proptest::collection::vec("[a-z0-9]{20,32}", 4..=5),
            pad in 0usize..8,
        ) {
            let body = format!("ord.{}", segs.join("."));
            let body = format!("{body}{}", "0".repeat(pad));
            if let Ok(c) = check_char(&body) {
                let key = format!("{body}-{c}");
                prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{}", key);
            }
            let key = format!("{body}-0");
            prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{}", key);
        }

        #[test]
        fn fast_check_agrees_on_near_valid_keys(
            kind in "[a-z]{1,9}",
            segs in proptest::collection::vec("[a-z0-9]{0,33}", 0..7),
            check in "[0-9a-z~.-]{0,2}",
        ) {
            let key = format!("{}{}-{}", kind, segs.iter().map(|s| format!(".{s}")).collect::<String>(), check);
            prop_assert_eq!(is_valid(&key), parse(&key).is_ok(), "{}", key);
            if let Ok(body) = std::str::from_utf8(&key.as_bytes()[..key.len().saturating_sub(2)]) {
                if let Ok(c) = check_char(body) {
                    let fixed = format!("{body}-{c}");
                    prop_assert_eq!(is_valid(&fixed), parse(&fixed).is_ok(), "{}", fixed);
                }
            }
        }
    }
}
