//! The words of the writer registry's, the grant-bound generators' and the edge store's errors,
//! in one place: `Error`'s `Display`, the registries (blocking and async) and the edge store
//! take them from here. They are the shared vectors' (`tests/vectors/registry_errors.json` and
//! `edge_traces.json`, key `words`, face `rust`); the test below renders every template and
//! compares. Moments are unix milliseconds, written `YYYY-MM-DD HH:MM:SS.mmm UTC`.

use std::time::Duration;

/// Seconds with one decimal and their unit, from milliseconds: `5.0 s`.
pub(crate) fn seconds(ms: i64) -> String {
    let tenths = (ms.unsigned_abs() + 50) / 100;
    format!(
        "{}{}.{} s",
        if ms < 0 { "-" } else { "" },
        tenths / 10,
        tenths % 10
    )
}

/// A duration as seconds in their shortest form and their unit: `1 s`, `0.25 s`.
pub(crate) fn seconds_text(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
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

// --- the registry (registry_errors.json) ------------------------------------------------------

/// A server error's message as `Error::Registry` keeps it: the message, then `": "` and the
/// DETAIL when there is one.
pub(crate) fn refusal_message(message: &str, detail: Option<&str>) -> String {
    match detail {
        Some(detail) => format!("{message}: {detail}"),
        None => message.to_string(),
    }
}

/// `Error::Registry`'s words (`server_refusal`, `server_refusal_no_detail`, `needs_0_7_0`,
/// `not_installed`).
pub(crate) fn registry(message: &str, sqlstate: Option<&str>) -> String {
    match sqlstate {
        Some(code) => format!("writer registry: {message} (SQLSTATE {code})"),
        None => format!("writer registry: {message}"),
    }
}

pub(crate) fn needs_0_7_0(message: &str) -> String {
    format!(
        "the writer registry needs the pg_idgen extension 0.7.0 or later \
         (ALTER EXTENSION pg_idgen UPDATE): {message}"
    )
}

pub(crate) const NOT_INSTALLED: &str = "the pg_idgen extension is not installed in this \
     database: CREATE EXTENSION pg_idgen (or the portable edition's script)";

pub(crate) const CLOSED: &str = "the grant-bound generator is closed";

pub(crate) const FORKED: &str = "a grant-bound generator was used in a child process made by \
     fork(): the grant is the parent's; make a new Registry in the child";

/// `Error::RegistryUnavailable`'s words.
pub(crate) fn unavailable(message: &str) -> String {
    format!("writer registry unavailable: {message}")
}

pub(crate) fn unreachable(cause: &dyn std::fmt::Display) -> String {
    format!("the writer registry could not be reached: {cause}")
}

/// A statement of the blocking registry not back within `timeout`.
pub(crate) fn no_answer(timeout: Duration) -> String {
    unreachable(&format_args!(
        "no answer within {}, the connection was abandoned",
        seconds_text(timeout)
    ))
}

/// A statement of the async registry not back within `timeout`.
pub(crate) fn no_answer_async(timeout: Duration) -> String {
    unreachable(&format_args!(
        "no answer within {}, the statement was abandoned",
        seconds_text(timeout)
    ))
}

pub(crate) fn busy(timeout: Duration) -> String {
    unreachable(&format_args!(
        "another call to it has not come back within {}",
        seconds_text(timeout)
    ))
}

/// What an id call could not do: renew the window that ended (unix ms of its end), or, with
/// `None`, acquire a grant.
pub(crate) fn no_id(hi_ms: Option<i64>) -> String {
    match hi_ms {
        Some(hi) => format!(
            "the grant's window ended at {} and could not be renewed, so no id is made",
            utc(hi)
        ),
        None => "no grant could be acquired, so no id is made".to_string(),
    }
}

/// `window_unrenewed` (`grant_unacquired` without a window).
pub(crate) fn unrenewed(hi_ms: Option<i64>, renew_wait: Duration) -> String {
    format!(
        "{}: the writer registry did not answer within {}",
        no_id(hi_ms),
        seconds_text(renew_wait)
    )
}

/// `window_unreachable` (`grant_unreachable` without a window): `cause` is the unavailable
/// registry's message.
pub(crate) fn unreachable_for_id(hi_ms: Option<i64>, cause: &str) -> String {
    format!("{}: {cause}", no_id(hi_ms))
}

pub(crate) fn clock_before_window(behind_ms: i64, start_ms: i64, max_wait_ms: i64) -> String {
    format!(
        "the clock is {} behind the grant's window, which starts at {} (the generator waits up to {}): is this machine's clock behind the database server's?",
        seconds(behind_ms),
        utc(start_ms),
        seconds(max_wait_ms)
    )
}

pub(crate) fn clock_ahead_of_window(ahead_ms: i64, hi_ms: i64) -> String {
    format!(
        "the grant's window ended at {} and renewing it did not move its end: the clock is {} ahead of it (is this machine's clock ahead of the database server's?)",
        utc(hi_ms),
        seconds(ahead_ms)
    )
}

// --- the edge store (edge_traces.json) --------------------------------------------------------

pub(crate) fn edge_grant(
    grant_id: i64,
    kind: &str,
    slot: i64,
    lo_us: i64,
    hi_us: i64,
    device: &str,
) -> String {
    format!(
        "grant {grant_id} ({kind} slot {slot}, window {} to {}) on device '{device}'",
        utc(lo_us.div_euclid(1000)),
        utc(hi_us.div_euclid(1000)),
    )
}

/// `Error::Edge`'s words.
pub(crate) fn edge(message: &str) -> String {
    format!("edge store: {message}")
}

pub(crate) fn edge_cloned(kept: &str) -> String {
    format!("no id is made: {kept}")
}

pub(crate) fn edge_clock_before_window(clock_ms: i64, grant: &str) -> String {
    format!(
        "the device clock reads {}, before the window of {grant}: no id is made; set the clock right (was it reset?)",
        utc(clock_ms)
    )
}

pub(crate) fn edge_window_ended(clock_ms: i64, grant: &str) -> String {
    format!(
        "the device clock reads {}, at or after the end of the window of {grant}: no id is made; sync with the registry to renew it",
        utc(clock_ms)
    )
}

pub(crate) fn edge_used_up(grant: &str, last_id_us: Option<i64>, clock_ms: i64) -> String {
    format!(
        "the ids of the window of {grant} are used up (the last is of {}; the device clock reads {}): no id is made; sync to renew it",
        last_id_us.map_or_else(|| "none".to_string(), |us| utc(us.div_euclid(1000))),
        utc(clock_ms)
    )
}

/// What a sync that got 23505 keeps in the row's `cloned`: the message, then the DETAIL in
/// parentheses (as the Python client keeps it).
pub(crate) fn edge_kept(message: &str, detail: Option<&str>) -> String {
    match detail {
        Some(d) => format!("{message} (DETAIL: {d})"),
        None => message.to_string(),
    }
}

/// `Error::EdgeCloned`'s words: the message, DETAIL and HINT.
pub(crate) fn edge_device_conflict(
    message: &str,
    detail: Option<&str>,
    hint: Option<&str>,
) -> String {
    let mut words = edge_kept(message, detail);
    if let Some(hint) = hint {
        words.push_str(&format!(" (HINT: {hint})"));
    }
    words
}

pub(crate) fn edge_no_grant_to_sync(kind: &str, device: &str) -> String {
    format!("this store holds no {kind} grant on device '{device}'")
}

pub(crate) fn edge_no_grant(kind: &str, device: &str) -> String {
    format!("{}: enrol it first", edge_no_grant_to_sync(kind, device))
}

pub(crate) fn edge_already_enrolled(grant: &str) -> String {
    format!(
        "this store already holds {grant}: sync it, or release it with sync(client, None), before enrolling again"
    )
}

pub(crate) const EDGE_SQLITE_IN_TRANSACTION: &str = "the SQLite connection is inside a \
     transaction: enrol and sync commit their writes to the file themselves; call them outside \
     one";

#[cfg(test)]
#[path = "words_tests.rs"]
mod tests;
