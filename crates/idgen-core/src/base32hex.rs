//! Lowercase base32hex (RFC 4648 "extended hex" alphabet) for exactly 12 bytes.
//!
//! 96 bits need 20 characters of 5 bits; the last character carries one data bit and
//! four zero bits, so only `0` and `g` may end a canonical text.

use crate::words::{invalid_input, text_of, Words};

pub const BYTES: usize = 12;
pub const CHARS: usize = 20;

const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";

const INVALID: u8 = 0xff;

/// Symbol value of every byte, upper and lower case accepted; `INVALID` elsewhere.
const DECODE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let mut i = 0;
    while i < 32 {
        let c = ALPHABET[i];
        table[c as usize] = i as u8;
        table[c.to_ascii_uppercase() as usize] = i as u8;
        i += 1;
    }
    table
};

/// Why a text is not an id. Positions and lengths count characters of the text as
/// [`text_of`] reads its bytes (UTF-8, or one character per byte), as a person counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// The text starts or ends with white space.
    Spaces,
    /// The text has `chars` characters, not [`CHARS`].
    Length { chars: usize },
    /// Character `character` (1-based) is outside the alphabet.
    Symbol { character: usize },
    /// The last character's unused low 4 bits are not zero (it is not `0` or `g`).
    NonCanonical,
}

impl DecodeError {
    /// The message and DETAIL for `text` (as [`text_of`] shows the input), which is not an
    /// xid12 for this reason.
    pub fn words(&self, text: &str) -> Words {
        let detail = match *self {
            DecodeError::Spaces => "Leading and trailing spaces are not allowed.".to_string(),
            DecodeError::Length { chars } => {
                format!(
                    "An xid12 is {CHARS} base32hex characters; the text has {chars} characters."
                )
            }
            DecodeError::Symbol { character } => {
                format!("Character {character} is outside the base32hex alphabet 0-9, a-v.")
            }
            DecodeError::NonCanonical => {
                "The last character must be 0 or g: its low 4 bits are unused and must be zero."
                    .to_string()
            }
        };
        Words::with_detail(invalid_input("xid12", text), detail)
    }
}

/// Where decoding stopped, in bytes.
enum Stop {
    Length,
    Symbol(usize),
}

/// The error of a text the byte decoder refused, counted in characters.
#[cold]
fn in_characters(bytes: &[u8], stop: Stop) -> DecodeError {
    let text = text_of(bytes);
    if text.trim() != text {
        return DecodeError::Spaces;
    }
    match stop {
        Stop::Length => match text.chars().count() {
            // As many characters as an id has, but some take more than one byte: the first
            // character that is not a symbol is named.
            CHARS => DecodeError::Symbol {
                character: text
                    .chars()
                    .position(|c| !c.is_ascii() || DECODE[c as usize] == INVALID)
                    .unwrap_or(0)
                    + 1,
            },
            chars => DecodeError::Length { chars },
        },
        // Every byte before the bad one is ASCII (or the text is one character per byte), so
        // the byte position is a character boundary.
        Stop::Symbol(position) => DecodeError::Symbol {
            character: text[..position].chars().count() + 1,
        },
    }
}

pub fn encode(bytes: &[u8; BYTES]) -> [u8; CHARS] {
    let mut wide = [0u8; 16];
    wide[4..].copy_from_slice(bytes);
    let bits = u128::from_be_bytes(wide) << 4;
    let mut out = [0u8; CHARS];
    for (i, c) in out.iter_mut().enumerate() {
        *c = ALPHABET[((bits >> (95 - 5 * i)) & 31) as usize];
    }
    out
}

pub fn decode(text: &[u8]) -> Result<[u8; BYTES], DecodeError> {
    if text.len() != CHARS {
        return Err(in_characters(text, Stop::Length));
    }
    let mut bits: u128 = 0;
    for (position, &c) in text.iter().enumerate() {
        let value = DECODE[c as usize];
        if value == INVALID {
            return Err(in_characters(text, Stop::Symbol(position)));
        }
        bits = (bits << 5) | value as u128;
    }
    if bits & 0xf != 0 {
        return Err(DecodeError::NonCanonical);
    }
    let wide = (bits >> 4).to_be_bytes();
    let mut out = [0u8; BYTES];
    out.copy_from_slice(&wide[4..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference() -> data_encoding::Encoding {
        let mut spec = data_encoding::Specification::new();
        spec.symbols.push_str("0123456789abcdefghijklmnopqrstuv");
        spec.encoding().unwrap()
    }

    #[test]
    fn known_values() {
        assert_eq!(&encode(&[0; 12]), b"00000000000000000000");
        assert_eq!(&encode(&[0xff; 12]), b"vvvvvvvvvvvvvvvvvvvg");
        // rs/xid's documented example id 9m4e2mr0ui3e8a215n4g.
        let bytes = [
            0x4d, 0x88, 0xe1, 0x5b, 0x60, 0xf4, 0x86, 0xe4, 0x28, 0x41, 0x2d, 0xc9,
        ];
        assert_eq!(&encode(&bytes), b"9m4e2mr0ui3e8a215n4g");
        assert_eq!(decode(b"9M4E2MR0UI3E8A215N4G"), Ok(bytes));
    }

    #[test]
    fn rejects_bad_text() {
        assert_eq!(decode(b""), Err(DecodeError::Length { chars: 0 }));
        assert_eq!(
            decode(b"0000000000000000000"),
            Err(DecodeError::Length { chars: 19 })
        );
        assert_eq!(
            decode(b"000000000000000000000"),
            Err(DecodeError::Length { chars: 21 })
        );
        assert_eq!(
            decode(b"0000000000w000000000"),
            Err(DecodeError::Symbol { character: 11 })
        );
        assert_eq!(
            decode(b"000000000 0000000000"),
            Err(DecodeError::Symbol { character: 10 })
        );
        assert_eq!(
            decode(b"000000000\x000000000000"),
            Err(DecodeError::Symbol { character: 10 })
        );
        assert_eq!(decode(b" 0000000000000000000"), Err(DecodeError::Spaces));
        // 20 characters, 21 bytes: the first non-ASCII character is named.
        assert_eq!(
            decode("00000000000000000é00".as_bytes()),
            Err(DecodeError::Symbol { character: 18 })
        );
        assert_eq!(
            decode(b"0000000000000000\xff00"),
            Err(DecodeError::Length { chars: 19 })
        );
        assert_eq!(
            decode(b"00000000000000000001"),
            Err(DecodeError::NonCanonical)
        );
        assert_eq!(
            decode(b"0000000000000000000v"),
            Err(DecodeError::NonCanonical)
        );
        assert!(decode("000000000000000000é".as_bytes()).is_err());
    }

    proptest! {
        #[test]
        fn matches_reference_codec(bytes in any::<[u8; 12]>()) {
            let ours = encode(&bytes);
            prop_assert_eq!(std::str::from_utf8(&ours).unwrap(), reference().encode(&bytes));
        }

        #[test]
        fn round_trips(bytes in any::<[u8; 12]>()) {
            let text = encode(&bytes);
            prop_assert_eq!(decode(&text), Ok(bytes));
            prop_assert_eq!(decode(text.to_ascii_uppercase().as_slice()), Ok(bytes));
        }

        #[test]
        fn byte_order_is_text_order(a in any::<[u8; 12]>(), b in any::<[u8; 12]>()) {
            prop_assert_eq!(a.cmp(&b), encode(&a).cmp(&encode(&b)));
        }

        #[test]
        fn accepted_text_is_canonical(text in "[0-9a-vA-V]{20}") {
            match decode(text.as_bytes()) {
                Ok(bytes) => prop_assert_eq!(encode(&bytes).to_vec(), text.to_ascii_lowercase().into_bytes()),
                Err(e) => prop_assert_eq!(e, DecodeError::NonCanonical),
            }
        }
    }
}
