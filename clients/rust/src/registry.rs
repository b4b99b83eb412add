//! Writers whose identity comes from the database: Snowflake worker ids and xid12 machine ids
//! granted by pg_idgen's writer registry (`idgen_acquire`, `idgen_renew`, `idgen_release`).
//!
//! A *grant* gives this process one *slot* (a Snowflake worker id, or an xid12 machine id) for
//! a *window* `[lo, hi)` of id-time. The registry never grants overlapping windows of one slot,
//! and a generator bound to a grant makes only ids of its slot inside its window, strictly
//! increasing, so two writers never make the same id whatever their clocks do. The rules are
//! the core's ([`idgen_core::grant`]); this module talks to the database:
//!
//! - the first grant is acquired when the generator is made, for the lease given, or (`None`)
//!   for the pool's default lease for the kind (the server's: no lease is sent);
//! - it is renewed at about half of what was left of the window when the server answered,
//!   counted from when the statement was sent (so the schedule follows the server's clock and
//!   a slow link's round trip does not eat into the time left): a background thread for
//!   [`Registry`], a tokio task for [`AsyncRegistry`];
//! - a grant lost (SQLSTATE 55000 or 42704: the slot's next id-time went to another writer, or
//!   the grant was released or is unknown) is never used again: a new grant is acquired, maybe
//!   of another slot. A fenced registry (IG001) and the other refusals are returned as they are
//!   ([`Error::registry_condition`](crate::Error::registry_condition));
//! - no id call waits on the network: at the window's end, `next_id` asks the renewal thread
//!   (or task) for a new window and waits for it at most `renew_wait` (1 s by default), then
//!   returns [`Error::RegistryUnavailable`](crate::Error::RegistryUnavailable) (or the
//!   registry's refusal); it never makes an id outside the window;
//! - every statement is bounded on the client's side by `timeout` (5 s by default): one that
//!   has not come back by then is abandoned with its connection, and the call returns
//!   `RegistryUnavailable`. A connection the registry makes from a DSN ([`Registry::connect`],
//!   [`AsyncRegistry::connect`]) gets a connect timeout, TCP keepalives and a TCP user timeout
//!   ([`tcp_timeouts`]);
//! - `close()` (and dropping the generator) releases the grant with the time of the last id
//!   made under it, so the rest of the window is free at once; it gives up after `timeout`
//!   (the window then just ends).
//!
//! Queries are single statements without named prepared statements or session state, so the
//! registry works through PgBouncer in transaction mode. The registry's functions are called
//! in their own schema, found by the edition lookup ([`crate::edition::EDITION_QUERY`]): the
//! native extension's, or the portable edition's, as a pg_tle extension or as the plain script
//! (made by the database owner or a superuser; a look-alike another role planted is not taken).

#[cfg(feature = "postgres")]
mod blocking;
#[cfg(feature = "sqlx")]
mod nonblocking;

#[cfg(feature = "postgres")]
pub(crate) use blocking::registry_error;
#[cfg(feature = "postgres")]
pub use blocking::{tcp_timeouts, GrantedSnowflake, GrantedXid, Registry};
#[cfg(feature = "sqlx")]
pub use nonblocking::{AsyncGrantedSnowflake, AsyncGrantedXid, AsyncRegistry};

use crate::{words, Error, Xid};
use idgen_core::grant::{GrantError, GrantStep, SnowflakeGrant, Window, XidGrant};
use idgen_core::xid::LocalCounter;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use idgen_core::grant::{DEFAULT_MAX_WAIT_MS, DEFAULT_MAX_WAIT_S};

/// The lease of the built-in `app` pool's default for xid12 (the server decides: a generator
/// made with no lease sends none, and gets the pool's default lease for the kind, which for
/// Snowflake is shorter). Kept for callers that named it; the client no longer sends it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(600);

/// How long `next_id` waits, at the window's end, for the renewal to bring a new window.
pub const DEFAULT_RENEW_WAIT: Duration = Duration::from_secs(1);

/// How long one registry statement may take (connecting included) before it is abandoned.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// A clock in unix milliseconds.
pub(crate) type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

fn system_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// How many times this process's ancestors forked into it, as far as the fork handler saw.
static FORKS: AtomicU64 = AtomicU64::new(0);

#[cfg(unix)]
extern "C" fn forked_child() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// The process's fork count, with the fork handler installed (once) first. A generator made
/// under one count must not run under another: a child made by `fork()` would share its
/// parent's grant and high-water mark.
pub(crate) fn fork_count() -> u64 {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        #[cfg(unix)]
        // SAFETY: registers a handler that only increments an atomic, which is async-signal-safe.
        unsafe {
            libc::pthread_atfork(None, None, Some(forked_child));
        }
    });
    FORKS.load(Ordering::Relaxed)
}

/// Whether the process forked since `count` was read.
#[inline]
pub(crate) fn forked_since(count: u64) -> bool {
    FORKS.load(Ordering::Relaxed) != count
}

/// A writer name a person can trace: `{hostname}:{pid}`.
pub fn default_writer() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string());
    format!("{host}:{}", std::process::id())
}

/// What every registry of either driver is configured with.
#[derive(Clone)]
pub(crate) struct Settings {
    pub writer: String,
    pub pool: String,
    /// How long a clock before the window (or, Snowflake, stepped back) waits, in ms.
    pub max_wait_ms: i64,
    pub clock: Clock,
    /// How long an id call waits at the window's end for a renewed window.
    pub renew_wait: Duration,
    /// The bound of one statement (and of `close()`).
    pub timeout: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            writer: default_writer(),
            pool: "app".to_string(),
            max_wait_ms: DEFAULT_MAX_WAIT_MS,
            clock: Arc::new(system_ms),
            renew_wait: DEFAULT_RENEW_WAIT,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// The kind of a grant, as the SQL functions spell it (`'snowflake'`, `'xid12'`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Snowflake,
    Xid12,
}

impl Kind {
    /// The kind's name in SQL: `"snowflake"` or `"xid12"`.
    pub fn sql(self) -> &'static str {
        match self {
            Kind::Snowflake => "snowflake",
            Kind::Xid12 => "xid12",
        }
    }
}

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

/// A generator bound to a grant, of either kind, in the clients' terms: clock readings and
/// waits in unix ms.
pub(crate) trait Core: Send + 'static {
    type Id: Copy + Send;
    const KIND: Kind;
    fn start(row: &GrantRow, max_wait_ms: i64) -> Result<Self, Error>
    where
        Self: Sized;
    fn rebind(&mut self, row: &GrantRow) -> Result<(), Error>;
    /// `next` at clock reading `now_ms`; a wait is returned in unix ms.
    fn step(&mut self, now_ms: i64) -> Result<GrantStep<Self::Id>, GrantError>;
    fn after_window(&self, now_ms: i64) -> GrantError;
    /// Unix ms of the last id made under the grant bound now, for the release.
    fn release_time_ms(&self) -> Option<i64>;
    /// Unix ms of the end of the window bound now.
    fn window_end_ms(&self) -> i64;
    /// Binds to no window (a lost grant is never used again): every call asks for a renewal.
    fn unbind(&mut self);
}

/// The window of no grant: every id-time is at or after its end.
const NO_WINDOW: Window = Window::new(i64::MIN, i64::MIN);

pub(crate) struct SnowflakeCore(SnowflakeGrant);

impl Core for SnowflakeCore {
    type Id = i64;
    const KIND: Kind = Kind::Snowflake;

    fn start(row: &GrantRow, max_wait_ms: i64) -> Result<Self, Error> {
        let epoch = snowflake_epoch(row)?;
        let window = Window::new(row.lo_t, row.hi_t);
        Ok(SnowflakeCore(SnowflakeGrant::new(
            epoch,
            row.slot,
            window,
            max_wait_ms,
        )?))
    }

    fn rebind(&mut self, row: &GrantRow) -> Result<(), Error> {
        let epoch = snowflake_epoch(row)?;
        if epoch != self.0.epoch_ms() {
            return Err(Error::Registry {
                sqlstate: None,
                message: format!(
                    "the registry's Snowflake epoch changed from {} to {epoch} while this generator ran",
                    self.0.epoch_ms()
                ),
            });
        }
        Ok(self.0.rebind(row.slot, Window::new(row.lo_t, row.hi_t))?)
    }

    #[inline]
    fn step(&mut self, now_ms: i64) -> Result<GrantStep<i64>, GrantError> {
        self.0.next(now_ms)
    }

    fn after_window(&self, now_ms: i64) -> GrantError {
        self.0.after_window(now_ms)
    }

    fn release_time_ms(&self) -> Option<i64> {
        self.0.grant_last_id_time().map(|t| t + self.0.epoch_ms())
    }

    fn window_end_ms(&self) -> i64 {
        self.0.window().hi.saturating_add(self.0.epoch_ms())
    }

    fn unbind(&mut self) {
        let slot = i64::from(self.0.slot());
        self.0.rebind(slot, NO_WINDOW).expect("the slot bound now");
    }
}

fn snowflake_epoch(row: &GrantRow) -> Result<i64, Error> {
    row.epoch_ms.ok_or_else(|| Error::Registry {
        sqlstate: None,
        message: "idgen_acquire returned no epoch_ms for a Snowflake grant".into(),
    })
}

pub(crate) struct XidCore {
    grant: XidGrant,
    pid: u16,
    counter: LocalCounter,
}

/// An xid12 window: unix seconds, as the row gives it.
fn xid_window(row: &GrantRow) -> Window {
    Window::new(row.lo_t, row.hi_t)
}

impl Core for XidCore {
    type Id = Xid;
    const KIND: Kind = Kind::Xid12;

    fn start(row: &GrantRow, max_wait_ms: i64) -> Result<Self, Error> {
        Ok(XidCore {
            grant: XidGrant::new(row.slot, xid_window(row), max_wait_ms / 1000)?,
            pid: std::process::id() as u16,
            counter: LocalCounter::starting_at(crate::xid::random_u32()),
        })
    }

    fn rebind(&mut self, row: &GrantRow) -> Result<(), Error> {
        Ok(self.grant.rebind(row.slot, xid_window(row))?)
    }

    #[inline]
    fn step(&mut self, now_ms: i64) -> Result<GrantStep<Xid>, GrantError> {
        let counter = self.counter.take();
        Ok(
            match self
                .grant
                .next(now_ms.div_euclid(1000), self.pid, counter)?
            {
                GrantStep::Issued(id) => GrantStep::Issued(Xid::from_bytes(id.0)),
                GrantStep::WaitUntil(s) => GrantStep::WaitUntil(s.saturating_mul(1000)),
                GrantStep::Renew => GrantStep::Renew,
            },
        )
    }

    fn after_window(&self, now_ms: i64) -> GrantError {
        self.grant.after_window(now_ms.div_euclid(1000))
    }

    fn release_time_ms(&self) -> Option<i64> {
        self.grant.grant_last_id_time().map(|s| s * 1000)
    }

    fn window_end_ms(&self) -> i64 {
        self.grant.window().hi.saturating_mul(1000)
    }

    fn unbind(&mut self) {
        let slot = i64::from(self.grant.slot());
        self.grant
            .rebind(slot, NO_WINDOW)
            .expect("the slot bound now");
    }
}

/// How long to sleep for a wait until unix ms `t` seen at `now`: at least 50 µs.
pub(crate) fn wait_for(t: i64, now: i64) -> Duration {
    let ms = u64::try_from(t.saturating_sub(now)).unwrap_or(0);
    Duration::from_millis(ms).max(Duration::from_micros(50))
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
