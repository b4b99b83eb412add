//! The writer registry's protocol, in one place, for the blocking [`Registry`](super::Registry),
//! the async [`AsyncRegistry`](super::AsyncRegistry) and the edge store
//! ([`crate::edge::EdgeStore`]): the grant row and what it says of the window, the statements
//! (every name qualified, every argument cast to the extension function's own type), how the
//! extension's schema is found, and how a server error becomes the registry's error (its
//! words are [`crate::words`]').

use crate::{words, Error};
use std::time::Duration;
#[cfg(feature = "postgres")]
use std::time::{SystemTime, UNIX_EPOCH};

/// One row of `idgen_acquire` / `idgen_renew`: the window and the server's clock in id-time,
/// the kind's own unit (the row's `lo_t`, `hi_t`, `server_t`: Snowflake ms since `epoch_ms`,
/// xid12 unix seconds; docs/formats.md §8), and the server's clock to the microsecond
/// (`server_time`, read as a timestamptz by the driver).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GrantRow {
    pub grant_id: i64,
    pub token: i64,
    pub slot: i64,
    pub lo_t: i64,
    pub hi_t: i64,
    /// The Snowflake epoch (unix ms); `None` for xid12.
    pub epoch_ms: Option<i64>,
    /// The server's clock when it answered, in id-time, rounded down.
    pub server_t: i64,
    /// The server's clock when it answered, unix µs.
    pub server_us: i64,
}

/// What a release needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GrantRef {
    pub grant_id: i64,
    pub token: i64,
}

impl GrantRow {
    pub fn grant_ref(&self) -> GrantRef {
        GrantRef {
            grant_id: self.grant_id,
            token: self.token,
        }
    }

    /// What was left of the window when the server answered, in ms (at least 1): Snowflake
    /// in its own unit; xid12 from `server_time`, as `server_t` is whole seconds.
    pub fn left_ms(&self) -> i64 {
        let left = match self.epoch_ms {
            Some(_) => self.hi_t.saturating_sub(self.server_t),
            None => self
                .hi_t
                .saturating_mul(1000)
                .saturating_sub(self.server_us.div_euclid(1000)),
        };
        left.max(1)
    }

    /// When to renew, on this process's monotonic clock: half of what was left of the window
    /// when the server answered, counted from `sent` (the server read its clock after the
    /// statement was sent, so the window ends no earlier than `sent` + what was left).
    pub fn renew_due(&self, sent: std::time::Instant) -> std::time::Instant {
        sent + Duration::from_millis((self.left_ms() / 2).max(50) as u64)
    }

    /// After a failed renewal: again in an eighth of what was left, 50 ms .. 5 s.
    pub fn retry_in(&self) -> Duration {
        Duration::from_millis((self.left_ms() / 8).clamp(50, 5000) as u64)
    }
}

// Every statement here names each function, operator and type with its schema (pg_catalog, or
// the extension's): nothing resolves through the caller's search_path, where another role may
// have put look-alikes. `public.*(bigint, interval)` is an exact match for `$3::int8 * interval
// '1 millisecond'`: it would beat pg_catalog's operator, which needs an implicit cast. So the
// operands are cast to the types of pg_catalog's operator, which then matches exactly, and the
// operator is named with OPERATOR(pg_catalog.*). The parameters are cast to the exact types of
// the extension's function, so no overload added to its schema (public, where the extension
// usually lives) is a better match. The grant row's times are read as the server gives them
// (id-time integers, and `server_time` as a timestamptz): no arithmetic on them in SQL.

/// `$n` (an int8 count of `unit`, e.g. `'1 millisecond'`) as an interval: pg_catalog's
/// float8 * interval, the operator `$n::int8 * interval` meant (ms and µs of unix times stay
/// below 2^53, so the float8 is exact).
pub(crate) fn times_unit(param: usize, unit: &str) -> String {
    format!(
        "(${param}::pg_catalog.int8::pg_catalog.float8 \
         OPERATOR(pg_catalog.*) '{unit}'::pg_catalog.interval)"
    )
}

/// `$n` (a timestamptz the driver sends), or `'-infinity'` for NULL (COALESCE is SQL syntax,
/// not a function a schema could shadow).
pub(crate) fn moment_or_never(param: usize) -> String {
    format!("COALESCE(${param}::pg_catalog.timestamptz, '-infinity'::pg_catalog.timestamptz)")
}

/// The server's refusal of a registry statement as an error: its SQLSTATE and its words. A
/// grant row without `lo_t` (42703) is an extension before 0.7.0, whose grant row the client
/// cannot read: the error says which version the registry needs.
pub(crate) fn server_refusal(sqlstate: String, message: String) -> Error {
    let message = if sqlstate == "42703" && message.contains("lo_t") {
        words::needs_0_7_0(&message)
    } else {
        message
    };
    Error::Registry {
        sqlstate: Some(sqlstate),
        message,
    }
}

/// Columns of a grant row (`GrantRow`, in this order; `lo_t`, `hi_t` and `server_t` need the
/// extension's 0.7.0). `call` is the schema-qualified function call.
pub(crate) fn grant_query(call: &str) -> String {
    format!("SELECT grant_id, token, slot, lo_t, hi_t, epoch_ms, server_t, server_time FROM {call}")
}

/// The `SystemTime` of unix µs `us`.
#[cfg(feature = "postgres")]
pub(crate) fn system_time(us: i64) -> SystemTime {
    if us >= 0 {
        UNIX_EPOCH + Duration::from_micros(us as u64)
    } else {
        UNIX_EPOCH - Duration::from_micros(us.unsigned_abs())
    }
}

/// Unix µs of a `SystemTime` (saturating; before 1970 negative).
#[cfg(feature = "postgres")]
pub(crate) fn system_time_us(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_micros()).map_or(i64::MIN, |us| -us),
    }
}

/// `$3` NULL: the pool's default lease for the kind (the server's).
pub(crate) fn acquire_sql(schema: &str) -> String {
    grant_query(&format!(
        "{schema}.idgen_acquire($1::pg_catalog.text, $2::pg_catalog.text, {}, $4::pg_catalog.text)",
        times_unit(3, "1 millisecond")
    ))
}

/// `$3` NULL: the grant's own lease (the server's).
pub(crate) fn renew_sql(schema: &str) -> String {
    grant_query(&format!(
        "{schema}.idgen_renew($1::pg_catalog.int8, $2::pg_catalog.int8, {})",
        times_unit(3, "1 millisecond")
    ))
}

/// `$3`: the moment of the last id made under the grant (a timestamptz), NULL for none
/// ('-infinity').
pub(crate) fn release_sql(schema: &str) -> String {
    format!(
        "SELECT 1 FROM {schema}.idgen_release($1::pg_catalog.int8, $2::pg_catalog.int8, {})",
        moment_or_never(3)
    )
}

/// The query that finds the registry's schema: the edition lookup,
/// [`EDITION_QUERY`](crate::edition::EDITION_QUERY), whose column [`SCHEMA_COLUMN`] names it
/// (no row: [`not_installed`]). The native extension's schema, or the portable edition's (its
/// pg_tle extension, or the schema of the plain script made by the database owner or a
/// superuser: a look-alike another role planted is no candidate); the registry's functions are
/// in that schema on both editions.
pub(crate) const SCHEMA_SQL: &str = crate::edition::EDITION_QUERY;

/// The column of [`SCHEMA_SQL`]'s row with the schema's name (unquoted).
pub(crate) const SCHEMA_COLUMN: usize = 1;

/// A schema's name quoted for SQL text, as `quote_ident` with every name quoted.
pub(crate) fn quote_schema(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

pub(crate) fn not_installed() -> Error {
    Error::Registry {
        sqlstate: None,
        message: words::NOT_INSTALLED.into(),
    }
}

/// Whether a registry error means the grant is gone for good and a new one must be acquired:
/// 55000 (grant lost: the slot was continued by another writer, or the grant was released) or
/// 42704 (no such grant).
/// A fenced acquire (IG001) is not "lost": it is returned as it is.
pub(crate) fn is_lost(e: &Error) -> bool {
    matches!(e, Error::Registry { .. })
        && e.registry_condition() == Some(crate::RegistryCondition::GrantLost)
}

/// `idgen_report(grant, token, device, syncs, last_id_time, attempt)` (an edge device's sync).
pub(crate) fn report_sql(schema: &str) -> String {
    format!(
        "SELECT {schema}.idgen_report($1::pg_catalog.int8, $2::pg_catalog.int8, \
         $3::pg_catalog.text, $4::pg_catalog.int8, $5::pg_catalog.timestamptz, \
         $6::pg_catalog.int8)"
    )
}

/// A grant row as the `postgres` crate reads it (`grant_query`'s columns).
#[cfg(feature = "postgres")]
pub(crate) fn grant_row(row: &postgres::Row) -> Result<GrantRow, postgres::Error> {
    Ok(GrantRow {
        grant_id: row.try_get(0)?,
        token: row.try_get(1)?,
        slot: row.try_get::<_, i32>(2)?.into(),
        lo_t: row.try_get(3)?,
        hi_t: row.try_get(4)?,
        epoch_ms: row.try_get(5)?,
        server_t: row.try_get(6)?,
        server_us: system_time_us(row.try_get::<_, SystemTime>(7)?),
    })
}

/// A lease given (`Some`) in ms, or `None` for the server's default.
pub(crate) fn opt_lease_ms(lease: Option<Duration>) -> Result<Option<i64>, Error> {
    lease.map(lease_ms).transpose()
}

pub(crate) fn unavailable(message: impl Into<String>) -> Error {
    Error::RegistryUnavailable {
        message: message.into(),
    }
}

/// What an id call says when its window ended and no new one came back within `renew_wait`.
pub(crate) fn window_unrenewed(hi_ms: Option<i64>, renew_wait: Duration) -> Error {
    unavailable(words::unrenewed(hi_ms, renew_wait))
}

/// The error an id call returns for a failed renewal it waited for: the registry's refusal as
/// it is, an unavailable registry with the window's context.
pub(crate) fn renewal_failed(e: &Error, hi_ms: Option<i64>) -> Error {
    match e {
        Error::RegistryUnavailable { message } => {
            unavailable(words::unreachable_for_id(hi_ms, message))
        }
        other => other.clone(),
    }
}

pub(crate) fn lease_ms(lease: Duration) -> Result<i64, Error> {
    match i64::try_from(lease.as_millis()) {
        Ok(ms) if ms >= 1000 => Ok(ms),
        _ => Err(Error::Registry {
            sqlstate: None,
            message: format!("a lease must be at least 1 s, got {lease:?}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::server_refusal;
    use crate::Error;

    #[test]
    fn a_grant_row_without_lo_t_names_the_version_needed() {
        let old = server_refusal("42703".into(), "column \"lo_t\" does not exist".into());
        match old {
            Error::Registry { sqlstate, message } => {
                assert_eq!(sqlstate.as_deref(), Some("42703"));
                assert!(
                    message.starts_with(
                        "the writer registry needs the pg_idgen extension 0.7.0 or later"
                    ),
                    "{message}"
                );
                assert!(
                    message.ends_with("column \"lo_t\" does not exist"),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
        match server_refusal("42703".into(), "column \"x\" does not exist".into()) {
            Error::Registry { message, .. } => assert_eq!(message, "column \"x\" does not exist"),
            other => panic!("{other:?}"),
        }
    }
}
