//! One error type for the whole crate. The words of the core's errors (ids, keys, parts) are
//! the core's, as the server shows them (`idgen_core::words`: the message, then `": "` and the
//! DETAIL); only the registry's and the grant-bound generators' errors are worded here.

use crate::words;
use idgen_core::base32hex::DecodeError;
use idgen_core::grant::GrantError;
use idgen_core::rapkey::{Given, RapkeyError};
use idgen_core::snowflake::{SettingNames, SnowflakeError};
use idgen_core::words::Words;
use idgen_core::xid::{BytesLengthError, XidError};
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
    /// A rapkey, body, part or prefix (`given`) that breaks the grammar or the check character.
    Rapkey { given: Given, error: RapkeyError },
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
    /// The writer registry could not be reached in time: a grant-bound generator's window
    /// ended and no renewed window (or new grant) came back within the registry's `renew_wait`
    /// (1 s by default), or a statement did not come back within its `timeout` (its
    /// connection is then abandoned), or the connection failed. No id was made; the next call
    /// tries again.
    RegistryUnavailable { message: String },
    /// The grant-bound generator, or its registry, was closed.
    Closed,
    /// A grant-bound generator used in a child made by `fork()`: the grant is the parent's.
    Forked,
    /// An edge store (feature `edge`) refused: it holds no grant, it already holds a live one
    /// (`enrol`), a connection is inside a transaction, or the SQLite file could not be read or
    /// written. The message says which.
    Edge { message: String },
    /// An edge store made no id: the device clock (unix ms) reads a time before its grant's
    /// window (a clock reset, say to 2000).
    EdgeClockBeforeWindow { clock_ms: i64, grant: EdgeWindow },
    /// An edge store made no id: the device clock (unix ms) is at or after the end of its
    /// grant's window, or (`used_up`) the window's ids are used up after the mark of
    /// `last_id_us`. Sync (renew) before making more.
    EdgeWindowEnded {
        clock_ms: i64,
        grant: EdgeWindow,
        used_up: bool,
        last_id_us: Option<i64>,
    },
    /// SQLSTATE 23505 from `idgen_report`: an edge store's grant is used by two devices (the
    /// file is a copy of a state another device continued). `detail` names both devices. The
    /// store makes no more ids of that grant (`next_id` then gives this error with the message
    /// kept in the file).
    EdgeCloned {
        message: String,
        detail: Option<String>,
        hint: Option<String>,
    },
}

/// The grant an edge store's error is about: its id, kind, slot and window `[lo_us, hi_us)` in
/// unix microseconds, and the device (feature `edge`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeWindow {
    pub grant_id: i64,
    /// `"xid12"` or `"snowflake"`.
    pub kind: &'static str,
    pub slot: i64,
    pub lo_us: i64,
    pub hi_us: i64,
    pub device: String,
}

impl fmt::Display for EdgeWindow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&words::edge_grant(
            self.grant_id,
            self.kind,
            self.slot,
            self.lo_us,
            self.hi_us,
            &self.device,
        ))
    }
}

impl std::error::Error for Error {}

/// The client's Snowflake settings, as Snowflake messages name them.
const SETTINGS: SettingNames<'static> = SettingNames {
    worker_id: "Snowflake::new",
    epoch: "Snowflake::epoch_ms",
    max_backward_ms: "Snowflake::max_backward_ms",
};

impl Error {
    /// The message and DETAIL the server shows for the same error, for the errors of ids, keys
    /// and parts; `None` for the client's own (registry, grant, closed, forked).
    pub fn words(&self) -> Option<Words> {
        Some(match self {
            Error::XidText { text, reason } => reason.words(text),
            Error::XidBytes { len } => BytesLengthError { len: *len }.words(),
            Error::XidParts(e) => e.words(),
            Error::Snowflake(e) => e.words(&SETTINGS),
            Error::Rapkey { given, error } => error.words(given),
            _ => return None,
        })
    }
}

/// What a writer registry error means, one condition per SQLSTATE of the registry's refusals
/// (docs/formats.md, "Writer registry: errors"; tests/vectors/registry_errors.json), as
/// [`Error::registry_condition`] tells it. Python and TypeScript raise the class of the same
/// name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RegistryCondition {
    /// IG001: after a failover, a point-in-time recovery or a restore, the registry grants
    /// nothing of this kind in this pool until a moment ([`Error::fenced_until`]).
    RegistryFenced,
    /// IG002: the caller's role may not take grants in this pool.
    PoolNotAllowed,
    /// IG003: the caller's role holds its cap of live grants in this pool.
    CapReached,
    /// IG004: the lease asked for is longer than the pool allows for this kind.
    LeaseTooLong,
    /// IG005: `pg_idgen.snowflake_epoch` differs from the epoch of the registry's grants.
    EpochChanged,
    /// IG006: an edge device reported an id outside its grant's window.
    ReportOutsideWindow,
    /// 55000 (grant lost) or 42704 (no such grant): acquire a new grant.
    GrantLost,
    /// 42501: a wrong token, a grant of another role, or a reservation.
    WrongToken,
    /// 53400: every slot of the pool for this kind is held.
    SlotsExhausted,
    /// 23505: one grant used by two edge devices (a copied device state).
    DeviceConflict,
    /// No SQLSTATE: the registry could not be reached in time ([`Error::RegistryUnavailable`]).
    Unavailable,
}

impl RegistryCondition {
    /// The condition of a registry SQLSTATE; `None` for a code the registry's contract does not
    /// list (a plain registry error).
    pub fn from_sqlstate(code: &str) -> Option<RegistryCondition> {
        use idgen_core::registry::RegistryCondition as Core;
        use RegistryCondition::*;
        // The table is the core's (one per condition); 42704 (no such grant) is shown as
        // GrantLost, as the other clients' classes are.
        Some(match Core::from_sqlstate(code)? {
            Core::Fenced => RegistryFenced,
            Core::PoolNotAllowed => PoolNotAllowed,
            Core::CapReached => CapReached,
            Core::LeaseTooLong => LeaseTooLong,
            Core::EpochChanged => EpochChanged,
            Core::ReportOutsideWindow => ReportOutsideWindow,
            Core::GrantLost | Core::GrantMissing => GrantLost,
            Core::WrongToken => WrongToken,
            Core::SlotsExhausted => SlotsExhausted,
            Core::DeviceConflict => DeviceConflict,
        })
    }

    /// The condition's name as the other clients' error classes spell it (`"RegistryFenced"`,
    /// `"GrantLost"`, … `"RegistryUnavailable"`).
    pub fn class_name(self) -> &'static str {
        use RegistryCondition::*;
        match self {
            RegistryFenced => "RegistryFenced",
            PoolNotAllowed => "PoolNotAllowed",
            CapReached => "CapReached",
            LeaseTooLong => "LeaseTooLong",
            EpochChanged => "EpochChanged",
            ReportOutsideWindow => "ReportOutsideWindow",
            GrantLost => "GrantLost",
            WrongToken => "WrongToken",
            SlotsExhausted => "SlotsExhausted",
            DeviceConflict => "DeviceConflict",
            Unavailable => "RegistryUnavailable",
        }
    }
}

impl fmt::Display for RegistryCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class_name())
    }
}

impl Error {
    /// The registry condition of this error: from the SQLSTATE of [`Error::Registry`],
    /// [`RegistryCondition::DeviceConflict`] for [`Error::EdgeCloned`], and
    /// [`RegistryCondition::Unavailable`] for [`Error::RegistryUnavailable`]; `None` for any
    /// other error (and for a registry SQLSTATE outside the contract).
    pub fn registry_condition(&self) -> Option<RegistryCondition> {
        match self {
            Error::Registry {
                sqlstate: Some(code),
                ..
            } => RegistryCondition::from_sqlstate(code),
            Error::EdgeCloned { .. } => Some(RegistryCondition::DeviceConflict),
            Error::RegistryUnavailable { .. } => Some(RegistryCondition::Unavailable),
            _ => None,
        }
    }

    /// For a fenced registry (SQLSTATE IG001), the moment its fence ends, in unix microseconds
    /// (UTC), read from the message (`… until 2026-12-04T10:35:12.345678Z`); `None` for any
    /// other error or a message without a moment in that form.
    pub fn fenced_until_us(&self) -> Option<i64> {
        match self {
            Error::Registry {
                sqlstate: Some(code),
                message,
            } if code == "IG001" => fence_end_us(message),
            _ => None,
        }
    }

    /// [`Error::fenced_until_us`] as a `SystemTime`.
    pub fn fenced_until(&self) -> Option<std::time::SystemTime> {
        let us = self.fenced_until_us()?;
        let epoch = std::time::UNIX_EPOCH;
        Some(if us >= 0 {
            epoch + std::time::Duration::from_micros(us as u64)
        } else {
            epoch - std::time::Duration::from_micros(us.unsigned_abs())
        })
    }
}

/// The moment after the first `until ` of a fence message that is followed by a UTC moment in
/// the form `YYYY-MM-DDTHH:MM:SS.ffffffZ` (the server's, with microseconds), as unix µs. The
/// message may go on after it (the client appends the DETAIL); the form is the core's
/// ([`idgen_core::pgtime::parse_utc_micros`]).
pub(crate) fn fence_end_us(message: &str) -> Option<i64> {
    use idgen_core::pgtime::{parse_utc_micros, UTC_MICROS_TEXT_LEN};
    message.match_indices("until ").find_map(|(i, m)| {
        let at = i + m.len();
        message
            .get(at..at + UTC_MICROS_TEXT_LEN)
            .and_then(parse_utc_micros)
    })
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(words) = self.words() {
            return fmt::Display::fmt(&words, f);
        }
        let text = match self {
            Error::Grant(e) => return grant_message(f, e),
            Error::Registry { sqlstate, message } => words::registry(message, sqlstate.as_deref()),
            Error::RegistryUnavailable { message } => words::unavailable(message),
            Error::Closed => words::CLOSED.to_string(),
            Error::Forked => words::FORKED.to_string(),
            Error::Edge { message } => words::edge(message),
            Error::EdgeClockBeforeWindow { clock_ms, grant } => {
                words::edge_clock_before_window(*clock_ms, &grant.to_string())
            }
            Error::EdgeWindowEnded {
                clock_ms,
                grant,
                used_up: false,
                ..
            } => words::edge_window_ended(*clock_ms, &grant.to_string()),
            Error::EdgeWindowEnded {
                clock_ms,
                grant,
                used_up: true,
                last_id_us,
            } => words::edge_used_up(&grant.to_string(), *last_id_us, *clock_ms),
            Error::EdgeCloned {
                message,
                detail,
                hint,
            } => words::edge_device_conflict(message, detail.as_deref(), hint.as_deref()),
            _ => unreachable!("worded by the core"),
        };
        f.write_str(&text)
    }
}

fn grant_message(f: &mut fmt::Formatter<'_>, e: &GrantError) -> fmt::Result {
    match *e {
        GrantError::ClockBeforeWindow {
            behind_ms,
            window_start_unix_ms,
            max_wait_ms,
        } => f.write_str(&words::clock_before_window(
            behind_ms,
            window_start_unix_ms,
            max_wait_ms,
        )),
        GrantError::ClockAfterWindow {
            ahead_ms,
            window_end_unix_ms,
        } => f.write_str(&words::clock_ahead_of_window(ahead_ms, window_end_unix_ms)),
        GrantError::SlotOutOfRange { slot, max } => write!(
            f,
            "the registry granted slot {slot}, outside the range 0 .. {max}"
        ),
        GrantError::Snowflake(e) => fmt::Display::fmt(&e.words(&SETTINGS), f),
        GrantError::Xid(e) => fmt::Display::fmt(&e.words(), f),
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
