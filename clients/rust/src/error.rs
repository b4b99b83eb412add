//! One error type for the whole crate: what went wrong, worded for a person.

use idgen_core::base32hex::{DecodeError, CHARS};
use idgen_core::grant::GrantError;
use idgen_core::rapkey::RapkeyError;
use idgen_core::snowflake::SnowflakeError;
use idgen_core::xid::{XidError, LEN, MAX_COUNTER, MAX_MACHINE};
use std::fmt;

/// Why an id, a key or a part was refused. Its `Display` says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A text that is not an xid12 (the text, and why).
    XidText { text: String, reason: DecodeError },
    /// Bytes that are not an xid12: an xid12 is exactly 12 bytes.
    XidBytes { len: usize },
    /// Parts that do not make an xid12 (a time outside 1970 .. 2106, a counter above 24 bits…).
    XidParts(XidError),
    /// A Snowflake id, worker, epoch or clock problem.
    Snowflake(SnowflakeError),
    /// A rapkey, body, part or prefix that breaks the grammar or the check character.
    Rapkey(RapkeyError),
    /// A generator bound to a writer grant refused: the clock is outside what the registry
    /// granted (and waiting or renewing did not help), or the registry granted a slot outside
    /// the kind's range.
    Grant(GrantError),
    /// The writer registry (the database) refused or could not be reached: the SQLSTATE when
    /// the server sent one (53400: every Snowflake slot is held), and the message.
    Registry {
        sqlstate: Option<String>,
        message: String,
    },
    /// The grant-bound generator, or its registry, was closed.
    Closed,
    /// A grant-bound generator used in a child made by `fork()`: the grant is the parent's.
    Forked,
}

impl std::error::Error for Error {}

/// At most this many characters of a bad input are quoted back.
const QUOTE_CHARS: usize = 40;

fn quoted(text: &str) -> String {
    let mut shown: String = text.chars().take(QUOTE_CHARS).collect();
    if text.chars().count() > QUOTE_CHARS {
        shown.push('…');
    }
    format!("{shown:?}")
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::XidText { text, reason } => {
                write!(f, "invalid xid12 text {}: ", quoted(text))?;
                let outside =
                    |f: &mut fmt::Formatter<'_>, character: usize| -> fmt::Result {
                        write!(
                            f,
                            "character {character} is outside the base32hex alphabet 0-9, a-v"
                        )
                    };
                match *reason {
                    DecodeError::Length(_) => match text.chars().count() {
                        CHARS => outside(
                            f,
                            text.chars().position(|c| !c.is_ascii()).unwrap_or(0) + 1,
                        ),
                        chars => write!(
                            f,
                            "an xid12 is {CHARS} base32hex characters, the text has {chars}"
                        ),
                    },
                    DecodeError::Symbol { position } => {
                        outside(f, text[..position].chars().count() + 1)
                    }
                    DecodeError::NonCanonical => f.write_str(
                        "the last character must be 0 or g (its low 4 bits are unused and must be zero)",
                    ),
                }
            }
            Error::XidBytes { len } => {
                write!(f, "invalid xid12 bytes: an xid12 is exactly {LEN} bytes, got {len}")
            }
            Error::XidParts(e) => match *e {
                XidError::TimeOutOfRange(s) => write!(
                    f,
                    "time out of range for xid12: unix second {s} is outside 1970-01-01 00:00:00 .. 2106-02-07 06:28:15 UTC"
                ),
                XidError::CounterOutOfRange(v) => {
                    write!(f, "xid12 counter {v} is outside the range 0 .. {MAX_COUNTER}")
                }
                XidError::MachineOutOfRange(v) => {
                    write!(f, "xid12 machine id {v} is outside the range 0 .. {MAX_MACHINE}")
                }
                XidError::MachineLength(n) => {
                    write!(f, "xid12 machine id must be 3 bytes, got {n}")
                }
                XidError::PidOutOfRange(v) => {
                    write!(f, "xid12 pid {v} is outside the range 0 .. {}", u16::MAX)
                }
            },
            Error::Snowflake(e) => snowflake_message(f, e),
            Error::Rapkey(e) => rapkey_message(f, e),
            Error::Grant(e) => grant_message(f, e),
            Error::Registry { sqlstate, message } => match sqlstate {
                Some(code) => write!(f, "writer registry: {message} (SQLSTATE {code})"),
                None => write!(f, "writer registry: {message}"),
            },
            Error::Closed => f.write_str("the grant-bound generator is closed"),
            Error::Forked => f.write_str(
                "a grant-bound generator was used in a child process made by fork(): the grant is the parent's; make a new Registry in the child",
            ),
        }
    }
}

fn snowflake_message(f: &mut fmt::Formatter<'_>, e: &SnowflakeError) -> fmt::Result {
    use idgen_core::snowflake::{MAX_EPOCH_MS, MAX_SEQUENCE, MAX_WORKER};
    match *e {
        SnowflakeError::WorkerOutOfRange { worker } => write!(
            f,
            "snowflake worker id {worker} is outside the range 0 .. {MAX_WORKER}"
        ),
        SnowflakeError::SequenceOutOfRange { sequence } => write!(
            f,
            "snowflake sequence {sequence} is outside the range 0 .. {MAX_SEQUENCE}"
        ),
        SnowflakeError::TimestampOutOfRange { ms_since_epoch } => write!(
            f,
            "time out of range for a snowflake id: {ms_since_epoch} ms after the epoch does not fit in 41 bits"
        ),
        SnowflakeError::BeforeEpoch { unix_ms, epoch_ms } => write!(
            f,
            "time out of range for a snowflake id: unix ms {unix_ms} is before the epoch {epoch_ms}"
        ),
        SnowflakeError::EpochOutOfRange { epoch_ms } => write!(
            f,
            "snowflake epoch {epoch_ms} ms is outside the range 0 .. {MAX_EPOCH_MS}"
        ),
        SnowflakeError::ClockMovedBack {
            behind_ms,
            limit_ms,
        } => write!(
            f,
            "the clock moved back: it is {behind_ms} ms behind the last snowflake id, more than the {limit_ms} ms the generator waits out"
        ),
        SnowflakeError::BehindRestoredMark {
            behind_ms,
            limit_ms,
        } => write!(
            f,
            "the clock is {behind_ms} ms behind the restored high-water mark, more than {limit_ms} ms"
        ),
        SnowflakeError::EpochChanged {
            old_epoch_ms,
            new_epoch_ms,
            behind_ms,
            limit_ms,
        } => write!(
            f,
            "the snowflake epoch moved from {old_epoch_ms} to {new_epoch_ms}: new ids would be {behind_ms} ms behind the last one, more than {limit_ms} ms"
        ),
        SnowflakeError::NegativeId { id } => {
            write!(f, "{id} is not a snowflake id: snowflake ids are never negative")
        }
    }
}

/// Seconds with one decimal, from milliseconds.
fn seconds(ms: i64) -> String {
    let tenths = (ms.unsigned_abs() + 50) / 100;
    format!(
        "{}{}.{} s",
        if ms < 0 { "-" } else { "" },
        tenths / 10,
        tenths % 10
    )
}

/// A unix millisecond as `YYYY-MM-DD HH:MM:SS.mmm UTC` (proleptic Gregorian calendar).
pub(crate) fn utc(unix_ms: i64) -> String {
    let days = unix_ms.div_euclid(86_400_000);
    let ms = unix_ms.rem_euclid(86_400_000);
    // Days to civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{:03} UTC",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

fn grant_message(f: &mut fmt::Formatter<'_>, e: &GrantError) -> fmt::Result {
    match *e {
        GrantError::ClockBeforeWindow {
            behind_ms,
            window_start_unix_ms,
            max_wait_ms,
        } => write!(
            f,
            "the clock is {} behind the grant's window, which starts at {} (the generator waits up to {}): is this machine's clock behind the database server's?",
            seconds(behind_ms),
            utc(window_start_unix_ms),
            seconds(max_wait_ms)
        ),
        GrantError::ClockAfterWindow {
            ahead_ms,
            window_end_unix_ms,
        } => write!(
            f,
            "the grant's window ended at {} and renewing it did not move its end: the clock is {} ahead of it (is this machine's clock ahead of the database server's?)",
            utc(window_end_unix_ms),
            seconds(ahead_ms)
        ),
        GrantError::SlotOutOfRange { slot, max } => write!(
            f,
            "the registry granted slot {slot}, outside the range 0 .. {max}"
        ),
        GrantError::Snowflake(e) => snowflake_message(f, &e),
        GrantError::Xid(e) => fmt::Display::fmt(&Error::XidParts(e), f),
    }
}

fn rapkey_message(f: &mut fmt::Formatter<'_>, e: &RapkeyError) -> fmt::Result {
    use idgen_core::rapkey::{
        MAX_BODY_LEN, MAX_KEY_LEN, MAX_SEGMENTS, MAX_SEGMENT_LEN, MAX_TYPE_LEN, MIN_TYPE_LEN,
    };
    f.write_str("invalid rapkey: ")?;
    match e {
        RapkeyError::Empty => f.write_str("the key is empty"),
        RapkeyError::KeyTooLong { len } => {
            write!(
                f,
                "the key has {len} characters, at most {MAX_KEY_LEN} are allowed"
            )
        }
        RapkeyError::BodyTooLong { len } => write!(
            f,
            "the body has {len} characters, at most {MAX_BODY_LEN} are allowed"
        ),
        RapkeyError::MissingCheckSeparator => f.write_str("no \"-\" before the check character"),
        RapkeyError::MissingCheckChar => f.write_str("no check character after the \"-\""),
        RapkeyError::ExtraCheckChars { check } => write!(
            f,
            "{} after the last \"-\": the check is one character",
            quoted(check)
        ),
        RapkeyError::InvalidCheckChar { found } => {
            write!(f, "check character {found:?} is not one of 0-9, a-z, ~")
        }
        RapkeyError::TypeLength { value, len } => {
            if *len == 0 {
                f.write_str("the type is empty")
            } else {
                write!(
                    f,
                    "type {} has {len} characters, a type has {MIN_TYPE_LEN} to {MAX_TYPE_LEN}",
                    quoted(value)
                )
            }
        }
        RapkeyError::TypeChar {
            value,
            position,
            found,
        } => write!(
            f,
            "type {}: character {position} ({found:?}) is not a lowercase letter a-z",
            quoted(value)
        ),
        RapkeyError::MissingSegment { kind } => {
            write!(f, "type {} is not followed by a segment", quoted(kind))
        }
        RapkeyError::TooManySegments { count } => {
            write!(f, "{count} segments, at most {MAX_SEGMENTS} are allowed")
        }
        RapkeyError::PrefixFull => write!(
            f,
            "the prefix already has {MAX_SEGMENTS} segments, no room for another"
        ),
        RapkeyError::EmptySegment { index } => write!(f, "segment {index} is empty"),
        RapkeyError::SegmentTooLong { index, value, len } => write!(
            f,
            "segment {index} ({}) has {len} characters, at most {MAX_SEGMENT_LEN} are allowed",
            quoted(value)
        ),
        RapkeyError::SegmentChar {
            index,
            value,
            position,
            found,
        } => write!(
            f,
            "segment {index} ({}): character {position} ({found:?}) is not one of a-z, 0-9",
            quoted(value)
        ),
        RapkeyError::WrongCheckChar { expected, found } => write!(
            f,
            "wrong check character {found:?}, the body's check character is {expected:?}"
        ),
    }
}

impl From<XidError> for Error {
    fn from(e: XidError) -> Self {
        Error::XidParts(e)
    }
}

impl From<SnowflakeError> for Error {
    fn from(e: SnowflakeError) -> Self {
        Error::Snowflake(e)
    }
}

impl From<GrantError> for Error {
    fn from(e: GrantError) -> Self {
        match e {
            GrantError::Snowflake(e) => Error::Snowflake(e),
            GrantError::Xid(e) => Error::XidParts(e),
            other => Error::Grant(other),
        }
    }
}

impl From<RapkeyError> for Error {
    fn from(e: RapkeyError) -> Self {
        Error::Rapkey(e)
    }
}
