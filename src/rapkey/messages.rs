//! The words of rapkey errors: the one place that turns the core's `RapkeyError` into
//! sentences.

use crate::errors::quoted;
use idgen_core::rapkey::{self, RapkeyError};

/// A character as a message shows it, quoted; a control character is escaped (`'\u{a}'`) so
/// it stays visible.
fn shown_char(c: char) -> String {
    if c.is_control() {
        format!("'\\u{{{:x}}}'", c as u32)
    } else {
        format!("'{c}'")
    }
}

/// Why a key, body, part or prefix is rejected, as a DETAIL sentence: the one place that words
/// the core's errors. Parts of the input are shown through `quoted`, so never unbounded.
pub fn why(error: &RapkeyError) -> String {
    use rapkey::{
        MAX_BODY_LEN, MAX_KEY_LEN, MAX_SEGMENTS, MAX_SEGMENT_LEN, MAX_TYPE_LEN, MIN_TYPE_LEN,
    };
    use RapkeyError::*;
    match error {
        Empty => "Key is empty.".into(),
        KeyTooLong { len } => {
            format!("Key is too long: {len} characters (at most {MAX_KEY_LEN}).")
        }
        BodyTooLong { len } => format!(
            "Body is too long: {len} characters (at most {MAX_BODY_LEN}, leaving room for '-' \
             and the check character)."
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
            "Type {} is too {}: {len} letter{} (a type has {MIN_TYPE_LEN} to {MAX_TYPE_LEN} \
             letters).",
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
            "The prefix already has {MAX_SEGMENTS} segments, the most a key has, so a number \
             cannot be added to it."
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
            "Segment {index} {} has a character outside [a-z0-9]: {} at position {position}.",
            quoted(value),
            shown_char(*found)
        ),
        WrongCheckChar { expected, found } => format!(
            "Wrong check character: expected '{expected}', found {}.",
            shown_char(*found)
        ),
    }
}
