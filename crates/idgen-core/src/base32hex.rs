//! Lowercase base32hex (RFC 4648 "extended hex" alphabet) for exactly 12 bytes.
//!
//! 96 bits need 20 characters of 5 bits; the last character carries one data bit and
//! four zero bits, so only `0` and `g` may end a canonical text.

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

/// Why a text is not an id. Positions and lengths count bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    Length(usize),
    Symbol { position: usize },
    NonCanonical,
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
        return Err(DecodeError::Length(text.len()));
    }
    let mut bits: u128 = 0;
    for (position, &c) in text.iter().enumerate() {
        let value = DECODE[c as usize];
        if value == INVALID {
            return Err(DecodeError::Symbol { position });
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
        assert_eq!(decode(b""), Err(DecodeError::Length(0)));
        assert_eq!(decode(b"0000000000000000000"), Err(DecodeError::Length(19)));
        assert_eq!(
            decode(b"000000000000000000000"),
            Err(DecodeError::Length(21))
        );
        assert_eq!(
            decode(b"0000000000w000000000"),
            Err(DecodeError::Symbol { position: 10 })
        );
        assert_eq!(
            decode(b"000000000 0000000000"),
            Err(DecodeError::Symbol { position: 9 })
        );
        assert_eq!(
            decode(b"000000000\x000000000000"),
            Err(DecodeError::Symbol { position: 9 })
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
