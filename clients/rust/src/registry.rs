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
#[cfg(feature = "edge")]
pub mod edge;
#[cfg(feature = "sqlx")]
mod nonblocking;
mod protocol;

#[cfg(feature = "postgres")]
pub(crate) use blocking::registry_error;
#[cfg(feature = "postgres")]
pub use blocking::{tcp_timeouts, GrantedSnowflake, GrantedXid, Registry};
#[cfg(feature = "sqlx")]
pub use nonblocking::{AsyncGrantedSnowflake, AsyncGrantedXid, AsyncRegistry};
pub(crate) use protocol::*;

use crate::{Error, Xid};
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

/// The builder methods of [`Registry`] and [`AsyncRegistry`], written once: each registry has
/// `configure(self, f)` (a clone with other settings) and `inner.settings`; they differ in the
/// words of `renew_wait` and `timeout` (a renewal thread or task, own connections or a pool).
macro_rules! settings_builders {
    ($registry:ident, $renew_wait_doc:literal, $timeout_doc:literal) => {
        /// The writer's name, as `idgen_grants` and `idgen_writer_of` show it.
        pub fn writer(self, name: impl Into<String>) -> $registry {
            let name = name.into();
            self.configure(|s| s.writer = name)
        }

        /// The registry pool to take grants from (default `app`).
        pub fn pool(self, pool: impl Into<String>) -> $registry {
            let pool = pool.into();
            self.configure(|s| s.pool = pool)
        }

        /// How long a clock before the window (or, Snowflake, stepped back) is waited out
        /// before `next_id` fails (default 5 s).
        pub fn max_wait(self, wait: Duration) -> $registry {
            let ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
            self.configure(|s| s.max_wait_ms = ms)
        }

        #[doc = $renew_wait_doc]
        pub fn renew_wait(self, wait: Duration) -> $registry {
            self.configure(|s| s.renew_wait = wait)
        }

        #[doc = $timeout_doc]
        pub fn timeout(self, timeout: Duration) -> $registry {
            let timeout = timeout.max(Duration::from_millis(1));
            self.configure(|s| s.timeout = timeout)
        }

        /// Another clock, in unix milliseconds (tests run writers ahead and behind).
        pub fn clock(self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> $registry {
            let clock = Arc::new(clock);
            self.configure(|s| s.clock = clock)
        }

        pub fn writer_name(&self) -> &str {
            &self.inner.settings.writer
        }
    };
}
pub(crate) use settings_builders;

/// What a Snowflake generator bound to a grant tells of its grant (both registries': a
/// `Handle` in `.0`, its state behind the module's `lock`), and its `Debug`.
macro_rules! snowflake_accessors {
    ($granted:ident) => {
        impl fmt::Debug for $granted {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let st = lock(&self.0 .0.state);
                f.debug_struct(stringify!($granted))
                    .field("slot", &st.core.0.slot())
                    .field("window", &st.core.0.window())
                    .finish_non_exhaustive()
            }
        }

        impl $granted {
            /// The worker id (slot) of the grant bound now.
            pub fn worker(&self) -> u16 {
                lock(&self.0 .0.state).core.0.slot()
            }

            /// The Snowflake epoch (unix ms) the registry's grants use.
            pub fn epoch_ms(&self) -> i64 {
                lock(&self.0 .0.state).core.0.epoch_ms()
            }

            /// The grant bound now: its id (`idgen_grants.grant_id`; -1 once closed), and how
            /// many times the generator was rebound (renewals and new grants).
            pub fn grant(&self) -> (i64, i64) {
                self.0.grant_info()
            }

            /// The window `[lo, hi)` bound now, in unix ms.
            pub fn window_ms(&self) -> (i64, i64) {
                let st = lock(&self.0 .0.state);
                let (w, e) = (st.core.0.window(), st.core.0.epoch_ms());
                (w.lo.saturating_add(e), w.hi.saturating_add(e))
            }
        }
    };
}
pub(crate) use snowflake_accessors;

/// What an xid12 generator bound to a grant tells of its grant, and its `Debug`.
macro_rules! xid_accessors {
    ($granted:ident) => {
        impl fmt::Debug for $granted {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let st = lock(&self.0 .0.state);
                f.debug_struct(stringify!($granted))
                    .field("slot", &st.core.grant.slot())
                    .field("window", &st.core.grant.window())
                    .finish_non_exhaustive()
            }
        }

        impl $granted {
            /// The machine id (slot) of the grant bound now.
            pub fn machine(&self) -> u32 {
                lock(&self.0 .0.state).core.grant.slot()
            }

            /// The grant bound now: its id (-1 once closed), and how many times the generator
            /// was rebound.
            pub fn grant(&self) -> (i64, i64) {
                self.0.grant_info()
            }

            /// The window `[lo, hi)` bound now, in unix seconds.
            pub fn window_s(&self) -> (i64, i64) {
                let w = lock(&self.0 .0.state).core.grant.window();
                (w.lo, w.hi)
            }
        }
    };
}
pub(crate) use xid_accessors;

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
