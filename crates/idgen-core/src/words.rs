//! The words every face shows for the core's errors, stated once: the server reports them as
//! message and DETAIL, the Rust client shows the same texts, and the other clients read them
//! from the shared vectors (tests/vectors/). Each error type has one `words` function (in its
//! module) built from the helpers here.

use std::borrow::Cow;
use std::fmt;

/// An error as a person reads it: PostgreSQL's message and, when there is one, its DETAIL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    pub message: String,
    pub detail: Option<String>,
}

impl Words {
    pub fn new(message: impl Into<String>) -> Self {
        Words {
            message: message.into(),
            detail: None,
        }
    }

    pub fn with_detail(message: impl Into<String>, detail: impl Into<String>) -> Self {
        Words {
            message: message.into(),
            detail: Some(detail.into()),
        }
    }
}

/// On one line: the message, then `": "` and the DETAIL when there is one.
impl fmt::Display for Words {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, ": {detail}")?;
        }
        Ok(())
    }
}

/// How many characters of a value a message quotes.
pub const QUOTED_CHARS: usize = 40;

/// A value quoted for a message. A message never carries unbounded input: past
/// [`QUOTED_CHARS`] characters the value is cut, and its length is given instead:
/// `"abc"`, or `"<the first 40 characters>..." (41 characters)`.
/// `idgen_backfill_column` in `sql/backfill.sql` quotes an unknown column by the same rule, in
/// PL/pgSQL; the `quoting` regression suite pins both to the same output.
pub fn quoted(value: &str) -> String {
    match value.char_indices().nth(QUOTED_CHARS) {
        None => format!("\"{value}\""),
        Some((cut, _)) => format!(
            "\"{}...\" ({} characters)",
            &value[..cut],
            value.chars().count()
        ),
    }
}

/// A character as a message shows it, in single quotes; a control character is escaped
/// (`'\u{a}'`) so that it stays visible.
pub fn shown_char(c: char) -> String {
    if c.is_control() {
        format!("'\\u{{{:x}}}'", c as u32)
    } else {
        format!("'{c}'")
    }
}

/// `invalid input syntax for type T: "input"`, as PostgreSQL's own input functions say it.
pub fn invalid_input(type_name: &str, input: &str) -> String {
    format!(
        "invalid input syntax for type {type_name}: {}",
        quoted(input)
    )
}

/// Bytes as text whose characters messages count: the bytes themselves when they are UTF-8,
/// otherwise one character per byte with every non-ASCII byte shown as `?` (so a text in
/// another encoding is still counted and shown, and is invalid anyway: ids and keys are ASCII).
pub fn text_of(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => Cow::Owned(
            bytes
                .iter()
                .map(|&b| if b.is_ascii() { b as char } else { '?' })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_cuts_at_40_characters() {
        assert_eq!(quoted("abc"), "\"abc\"");
        let forty = "é".repeat(40);
        assert_eq!(quoted(&forty), format!("\"{forty}\""));
        assert_eq!(
            quoted(&format!("{forty}x")),
            format!("\"{forty}...\" (41 characters)")
        );
    }

    #[test]
    fn one_line() {
        assert_eq!(Words::new("m").to_string(), "m");
        assert_eq!(Words::with_detail("m", "D.").to_string(), "m: D.");
        assert_eq!(shown_char('\n'), "'\\u{a}'");
        assert_eq!(text_of(b"a\xffb"), "a?b");
    }
}
