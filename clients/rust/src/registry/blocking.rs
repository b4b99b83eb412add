//! The registry through the `postgres` crate (synchronous), with renewal in a background thread.
//!
//! Every statement runs in a thread of its own while the caller waits for it at most until its
//! deadline (the registry's `timeout`): one that has not come back is abandoned with its
//! connection (the thread ends when the connection fails; a connection made from a DSN has TCP
//! timeouts for that), and the next statement makes a new connection. The connection is used
//! by one statement at a time; a caller waits for it at most until its own deadline. An id call
//! never runs a statement: it asks the renewal thread and waits for it at most `renew_wait`.

use super::{
    acquire_sql, is_lost, not_installed, opt_lease_ms, quote_schema, release_sql, renew_sql,
    renewal_failed, unavailable, wait_for, window_unrenewed, Core, GrantRef, GrantRow, Settings,
    SnowflakeCore, XidCore, SCHEMA_COLUMN, SCHEMA_SQL,
};
use super::{system_time, system_time_us};
use crate::{words, Error, Xid};
use idgen_core::grant::GrantStep;
use postgres::types::{ToSql, Type};
use std::fmt;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

type Connect = dyn Fn() -> Result<postgres::Client, postgres::Error> + Send + Sync;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn registry_error(e: postgres::Error) -> Error {
    match e.as_db_error() {
        Some(db) => super::server_refusal(
            db.code().code().to_string(),
            words::refusal_message(db.message(), db.detail()),
        ),
        None => Error::Registry {
            sqlstate: e.code().map(|c| c.code().to_string()),
            message: e.to_string(),
        },
    }
}

/// A statement's failure: the server's answer (a registry error), or none (the connection or
/// the link failed: the registry is unavailable, and the connection is not used again).
fn statement_error(e: postgres::Error) -> Error {
    let class = e.code().map(|c| c.code().to_string());
    let broken = e.as_db_error().is_none()
        || class
            .as_deref()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P"));
    if broken {
        unavailable(words::unreachable(&e))
    } else {
        registry_error(e)
    }
}

/// Sets, on a connection's configuration, what finds a dead link: a connect timeout of
/// `max(2 s, timeout)`, TCP keepalives after 10 s idle (3 probes 2 s apart) and a TCP user
/// timeout of `timeout` (Linux: unacknowledged data for that long fails the connection), each
/// only where `config` sets none. [`Registry::connect`] does this to the DSN it is given; call
/// it on the `Config` of a factory given to [`Registry::new`] to have the same.
pub fn tcp_timeouts(config: &mut postgres::Config, timeout: Duration) -> &mut postgres::Config {
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(timeout.max(Duration::from_secs(2)));
    }
    if config.get_tcp_user_timeout().is_none() {
        config.tcp_user_timeout(timeout.max(Duration::from_millis(1)));
    }
    // The postgres crate's default idle time before the first probe is 2 hours.
    if config.get_keepalives() && config.get_keepalives_idle() == Duration::from_secs(7200) {
        config.keepalives_idle(Duration::from_secs(10));
    }
    if config.get_keepalives_interval().is_none() {
        config.keepalives_interval(Duration::from_secs(2));
    }
    if config.get_keepalives_retries().is_none() {
        config.keepalives_retries(3);
    }
    config
}

/// Where connections come from: the caller's factory, or a DSN (with [`tcp_timeouts`]).
#[derive(Clone)]
enum Source {
    Factory(Arc<Connect>),
    Dsn(Box<postgres::Config>),
}

impl Source {
    fn connect(&self, timeout: Duration) -> Result<postgres::Client, postgres::Error> {
        match self {
            Source::Factory(f) => f(),
            Source::Dsn(config) => {
                let mut config = (**config).clone();
                tcp_timeouts(&mut config, timeout).connect(postgres::NoTls)
            }
        }
    }
}

/// The connection, made on first use and again after it broke, with the extension's schema.
struct Conn {
    client: postgres::Client,
    schema: String,
}

/// The connection, and whether a statement has it now (it is then out of the slot, in the
/// statement's thread).
#[derive(Default)]
struct ConnSlot {
    conn: Option<Conn>,
    busy: bool,
}

/// A statement's parameter, owned (it goes to the statement's thread).
#[derive(Clone, Debug)]
enum Param {
    Text(String),
    Int8(Option<i64>),
    Timestamptz(Option<std::time::SystemTime>),
}

impl Param {
    fn sql(&self) -> (&(dyn ToSql + Sync), Type) {
        match self {
            Param::Text(t) => (t, Type::TEXT),
            Param::Int8(v) => (v, Type::INT8),
            Param::Timestamptz(v) => (v, Type::TIMESTAMPTZ),
        }
    }
}

struct Inner {
    settings: Settings,
    source: Source,
    slot: Mutex<ConnSlot>,
    /// Signalled when the connection is given back (or abandoned).
    slot_free: Condvar,
    generators: Mutex<Vec<Weak<dyn Close>>>,
}

/// A statement's rows, and when it was sent.
type Answer = (Vec<postgres::Row>, Instant);

/// Runs `sql` on `conn` (made first when there is none or it is closed); a connection that was
/// already there and fails without the server's answer (a server restarted meanwhile) is made
/// again and the statement run once more: acquire, renew and release may all be repeated (a
/// repeated acquire at worst leaves one unused grant to end with its lease). Returns the
/// connection to keep, and the rows with the moment the statement was sent.
fn run(
    source: &Source,
    timeout: Duration,
    mut conn: Option<Conn>,
    sql: fn(&str) -> String,
    params: &[Param],
) -> (Option<Conn>, Result<Answer, Error>) {
    let params: Vec<_> = params.iter().map(Param::sql).collect();
    for attempt in 0..2 {
        let fresh = conn.as_ref().is_none_or(|c| c.client.is_closed());
        if fresh {
            let made = source
                .connect(timeout)
                .map_err(statement_error)
                .and_then(|mut client| {
                    let row = client
                        .query_typed_opt(SCHEMA_SQL, &[])
                        .map_err(statement_error)?
                        .ok_or_else(not_installed)?;
                    let schema = quote_schema(row.get(SCHEMA_COLUMN));
                    Ok(Conn { client, schema })
                });
            match made {
                Ok(c) => conn = Some(c),
                Err(e) => return (None, Err(e)),
            }
        }
        let c = conn.as_mut().expect("connected above");
        let sent = Instant::now();
        match c.client.query_typed(&sql(&c.schema), &params) {
            Ok(rows) => return (conn, Ok((rows, sent))),
            Err(e) => {
                let e = statement_error(e);
                if !matches!(e, Error::RegistryUnavailable { .. }) {
                    return (conn, Err(e));
                }
                conn = None;
                if fresh || attempt == 1 {
                    return (None, Err(e));
                }
            }
        }
    }
    unreachable!("the second attempt returns")
}

impl Inner {
    /// Runs one statement on the registry's connection, giving up at `deadline`: waiting for
    /// the connection (another statement has it) or for the statement's answer. A statement
    /// that has not answered by then is abandoned with its connection.
    fn query(
        &self,
        sql: fn(&str) -> String,
        params: Vec<Param>,
        deadline: Instant,
    ) -> Result<Answer, Error> {
        let timeout = self.settings.timeout;
        let conn = {
            let mut slot = lock(&self.slot);
            while slot.busy {
                let now = Instant::now();
                if now >= deadline {
                    return Err(unavailable(words::busy(timeout)));
                }
                slot = self
                    .slot_free
                    .wait_timeout(slot, deadline - now)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            slot.busy = true;
            slot.conn.take()
        };
        let (tx, rx) = mpsc::sync_channel(1);
        let source = self.source.clone();
        let spawned = std::thread::Builder::new()
            .name("pg_idgen-statement".into())
            .spawn(move || {
                let _ = tx.send(run(&source, timeout, conn, sql, &params));
            });
        let answer = match spawned {
            Ok(_) => rx.recv_timeout(deadline.saturating_duration_since(Instant::now())),
            Err(e) => {
                self.give_back(None);
                return Err(unavailable(format!(
                    "cannot start a thread for the registry's statement: {e}"
                )));
            }
        };
        match answer {
            Ok((conn, result)) => {
                self.give_back(conn);
                result
            }
            Err(_) => {
                // Abandoned: its thread keeps the connection until the statement fails.
                self.give_back(None);
                Err(unavailable(words::no_answer(timeout)))
            }
        }
    }

    fn give_back(&self, conn: Option<Conn>) {
        let mut slot = lock(&self.slot);
        slot.conn = conn;
        slot.busy = false;
        self.slot_free.notify_all();
    }

    fn deadline(&self) -> Instant {
        Instant::now() + self.settings.timeout
    }

    /// The grant row of an answer, and when its statement was sent.
    fn grant((rows, sent): Answer) -> Result<(GrantRow, Instant), Error> {
        let row = rows.into_iter().next().ok_or_else(|| Error::Registry {
            sqlstate: None,
            message: "the registry returned no grant".into(),
        })?;
        let value =
            |i: usize| -> Result<i64, Error> { row.try_get::<_, i64>(i).map_err(registry_error) };
        Ok((
            GrantRow {
                grant_id: value(0)?,
                token: value(1)?,
                slot: row.try_get::<_, i32>(2).map_err(registry_error)?.into(),
                lo_t: value(3)?,
                hi_t: value(4)?,
                epoch_ms: row.try_get::<_, Option<i64>>(5).map_err(registry_error)?,
                server_t: value(6)?,
                server_us: system_time_us(
                    row.try_get::<_, std::time::SystemTime>(7)
                        .map_err(registry_error)?,
                ),
            },
            sent,
        ))
    }

    /// A new grant of `kind`, for `lease_ms` or (`None`) the pool's default lease.
    fn acquire(&self, kind: &str, lease_ms: Option<i64>) -> Result<(GrantRow, Instant), Error> {
        let s = &self.settings;
        let (kind, writer, pool) = (
            Param::Text(kind.into()),
            Param::Text(s.writer.clone()),
            Param::Text(s.pool.clone()),
        );
        let answer = self.query(
            acquire_sql,
            vec![kind, writer, Param::Int8(lease_ms), pool],
            self.deadline(),
        );
        Self::grant(answer?)
    }

    /// Renews `grant` for `lease_ms` or (`None`) its own lease.
    fn renew(&self, grant: GrantRef, lease_ms: Option<i64>) -> Result<(GrantRow, Instant), Error> {
        Self::grant(self.query(
            renew_sql,
            vec![
                Param::Int8(Some(grant.grant_id)),
                Param::Int8(Some(grant.token)),
                Param::Int8(lease_ms),
            ],
            self.deadline(),
        )?)
    }

    fn release(
        &self,
        grant: GrantRef,
        last_ms: Option<i64>,
        deadline: Instant,
    ) -> Result<(), Error> {
        self.query(
            release_sql,
            vec![
                Param::Int8(Some(grant.grant_id)),
                Param::Int8(Some(grant.token)),
                Param::Timestamptz(last_ms.map(|ms| system_time(ms.saturating_mul(1000)))),
            ],
            deadline,
        )
        .map(drop)
    }
}

/// A writer registry reached through the `postgres` crate: a factory of connections (one is
/// kept, and made again when it breaks), or a DSN, and a writer name. Each generator it makes
/// holds a grant of its own. Cheap to clone; clones share the connection and the generators.
///
/// ```no_run
/// use pg_idgen_client::registry::Registry;
/// let registry = Registry::connect("host=/run/postgresql dbname=app")?;
/// let ids = registry.snowflake(None)?; // the pool's default lease
/// let id: i64 = ids.next_id()?;
/// ids.close()?; // or drop it: the grant is released either way
/// # Ok::<(), pg_idgen_client::Error>(())
/// ```
#[derive(Clone)]
pub struct Registry {
    inner: Arc<Inner>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("writer", &self.inner.settings.writer)
            .field("pool", &self.inner.settings.pool)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry whose connections `connect` makes; the writer is named `{hostname}:{pid}`.
    /// The factory's connections get no TCP timeouts from the registry (see [`tcp_timeouts`]);
    /// every statement is bounded all the same.
    pub fn new<F>(connect: F) -> Registry
    where
        F: Fn() -> Result<postgres::Client, postgres::Error> + Send + Sync + 'static,
    {
        Registry::with(Source::Factory(Arc::new(connect)), Settings::default())
    }

    /// A registry on the database of `dsn` (a libpq key=value string or a `postgresql://` URL;
    /// no TLS: for TLS give [`Registry::new`] a factory), connected on first use. Its
    /// connections get [`tcp_timeouts`] (the connect timeout, keepalives and TCP user
    /// timeout), each unless the DSN sets it.
    pub fn connect(dsn: &str) -> Result<Registry, Error> {
        let config: postgres::Config = dsn.parse().map_err(|e| Error::Registry {
            sqlstate: None,
            message: format!("not a connection string: {e}"),
        })?;
        Ok(Registry::with(
            Source::Dsn(Box::new(config)),
            Settings::default(),
        ))
    }

    fn with(source: Source, settings: Settings) -> Registry {
        Registry {
            inner: Arc::new(Inner {
                settings,
                source,
                slot: Mutex::new(ConnSlot::default()),
                slot_free: Condvar::new(),
                generators: Mutex::new(Vec::new()),
            }),
        }
    }

    fn configure(self, f: impl FnOnce(&mut Settings)) -> Registry {
        let mut settings = self.inner.settings.clone();
        f(&mut settings);
        Registry::with(self.inner.source.clone(), settings)
    }

    /// The writer's name, as `idgen_grants` and `idgen_writer_of` show it.
    pub fn writer(self, name: impl Into<String>) -> Registry {
        let name = name.into();
        self.configure(|s| s.writer = name)
    }

    /// The registry pool to take grants from (default `app`).
    pub fn pool(self, pool: impl Into<String>) -> Registry {
        let pool = pool.into();
        self.configure(|s| s.pool = pool)
    }

    /// How long a clock before the window (or, Snowflake, stepped back) is waited out before
    /// `next_id` fails (default 5 s).
    pub fn max_wait(self, wait: Duration) -> Registry {
        let ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
        self.configure(|s| s.max_wait_ms = ms)
    }

    /// How long `next_id` waits at the window's end (or without a grant) for the renewal thread
    /// to bring a window before it returns [`Error::RegistryUnavailable`] (default 1 s).
    pub fn renew_wait(self, wait: Duration) -> Registry {
        self.configure(|s| s.renew_wait = wait)
    }

    /// How long one statement to the registry may take, connecting included, before it is
    /// abandoned with its connection (default 5 s; at least 1 ms); also the bound of `close()`
    /// and, for a DSN, of the TCP timeouts.
    pub fn timeout(self, timeout: Duration) -> Registry {
        let timeout = timeout.max(Duration::from_millis(1));
        self.configure(|s| s.timeout = timeout)
    }

    /// Another clock, in unix milliseconds (tests run writers ahead and behind).
    pub fn clock(self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Registry {
        let clock = Arc::new(clock);
        self.configure(|s| s.clock = clock)
    }

    pub fn writer_name(&self) -> &str {
        &self.inner.settings.writer
    }

    /// A Snowflake generator bound to a grant of `lease` (at least 1 s), or with `None` of the
    /// pool's default lease for Snowflake (the server's), acquired now.
    pub fn snowflake(&self, lease: impl Into<Option<Duration>>) -> Result<GrantedSnowflake, Error> {
        Ok(GrantedSnowflake(self.start(lease.into())?))
    }

    /// An xid12 generator bound to a grant of `lease` (at least 1 s), or with `None` of the
    /// pool's default lease for xid12, acquired now.
    pub fn xid12(&self, lease: impl Into<Option<Duration>>) -> Result<GrantedXid, Error> {
        Ok(GrantedXid(self.start(lease.into())?))
    }

    fn start<C: Core>(&self, lease: Option<Duration>) -> Result<Handle<C>, Error> {
        let lease_ms = opt_lease_ms(lease)?;
        let (row, sent) = self.inner.acquire(C::KIND.sql(), lease_ms)?;
        let core = match C::start(&row, self.inner.settings.max_wait_ms) {
            Ok(core) => core,
            Err(e) => {
                let _ = self
                    .inner
                    .release(row.grant_ref(), None, self.inner.deadline());
                return Err(e);
            }
        };
        let shared = Arc::new(Shared {
            registry: self.inner.clone(),
            lease_ms,
            forks: super::fork_count(),
            state: Mutex::new(State {
                core,
                grant: Some(row.grant_ref()),
                generation: 0,
                renew_due: row.renew_due(sent),
                retry_in: row.retry_in(),
                attempts: 0,
                error: None,
                closed: false,
            }),
            renewing: Mutex::new(()),
            changed: Condvar::new(),
        });
        let weak = Arc::downgrade(&shared);
        std::thread::Builder::new()
            .name("pg_idgen-renew".into())
            .spawn(move || background(weak))
            .map_err(|e| Error::Registry {
                sqlstate: None,
                message: format!("cannot start the renewal thread: {e}"),
            })?;
        let mut generators = lock(&self.inner.generators);
        generators.retain(|g| g.strong_count() > 0);
        let closer: Arc<dyn Close> = shared.clone();
        generators.push(Arc::downgrade(&closer));
        Ok(Handle(shared))
    }

    /// Closes every generator made from this registry (or a clone of it), releasing their
    /// grants; the first error is returned after all were tried. Takes at most about the
    /// registry's `timeout`: a release not done by then is given up (its window just ends).
    pub fn close(&self) -> Result<(), Error> {
        let deadline = self.inner.deadline();
        let generators: Vec<_> = lock(&self.inner.generators).drain(..).collect();
        let mut first = Ok(());
        for g in generators.iter().filter_map(Weak::upgrade) {
            let r = g.close_by(deadline);
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

trait Close: Send + Sync {
    fn close_by(&self, deadline: Instant) -> Result<(), Error>;
}

struct State<C> {
    core: C,
    /// The grant bound now; `None` once closed, or after a grant was lost and no new one came.
    grant: Option<GrantRef>,
    /// Moves on at each rebind: a renewal asked for under an older one is already done.
    generation: u64,
    renew_due: Instant,
    /// After a failed renewal, the next is tried this much later.
    retry_in: Duration,
    /// Renewals (or acquires) finished, and how the last one failed.
    attempts: u64,
    error: Option<Error>,
    closed: bool,
}

impl<C: Core> State<C> {
    /// The end of the window bound now (unix ms), `None` without a grant.
    fn hi_ms(&self) -> Option<i64> {
        self.grant.map(|_| self.core.window_end_ms())
    }
}

struct Shared<C> {
    registry: Arc<Inner>,
    /// The lease asked for; `None`: the server's default.
    lease_ms: Option<i64>,
    /// The fork count when the grant was acquired; a forked child must not use it.
    forks: u64,
    state: Mutex<State<C>>,
    /// Held across a renewal's round trips (before `state`, never after); never by an id call
    /// or `close()`.
    renewing: Mutex<()>,
    /// Signalled when the state changes: a renewal is due now, a renewal finished, closed.
    changed: Condvar,
}

impl<C: Core> Shared<C> {
    fn next(&self) -> Result<C::Id, Error> {
        if super::forked_since(self.forks) {
            return Err(Error::Forked);
        }
        let mut renewals = 0;
        loop {
            let now = (self.registry.settings.clock)();
            let (step, generation) = {
                let mut st = lock(&self.state);
                if st.closed {
                    return Err(Error::Closed);
                }
                (st.core.step(now)?, st.generation)
            };
            match step {
                GrantStep::Issued(id) => return Ok(id),
                GrantStep::WaitUntil(t) => std::thread::sleep(wait_for(t, now)),
                GrantStep::Renew => {
                    // A renewed window the clock is still past: the clock is ahead.
                    if renewals == 2 {
                        return Err(lock(&self.state).core.after_window(now).into());
                    }
                    renewals += 1;
                    self.await_window(generation)?;
                }
            }
        }
    }

    /// At the window's end (or without a grant): asks the renewal thread for a renewal now and
    /// waits for a new window at most `renew_wait`. Never touches the network itself. The
    /// renewal's refusal, or `RegistryUnavailable` when nothing came back in time.
    fn await_window(&self, seen: u64) -> Result<(), Error> {
        let wait = self.registry.settings.renew_wait;
        let deadline = Instant::now() + wait;
        let mut st = lock(&self.state);
        let attempts = st.attempts;
        if st.generation == seen {
            st.renew_due = Instant::now();
            self.changed.notify_all();
        }
        loop {
            if st.closed {
                return Err(Error::Closed);
            }
            if st.generation != seen {
                return Ok(());
            }
            if st.attempts != attempts {
                if let Some(e) = &st.error {
                    return Err(renewal_failed(e, st.hi_ms()));
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(window_unrenewed(st.hi_ms(), wait));
            }
            st = self
                .changed
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Renews the grant bound at `seen` (unless that was done meanwhile); when it is lost,
    /// acquires a new one. Either way the core is rebound to the answer. Every statement is
    /// bounded by the registry's `timeout`.
    fn renew(&self, seen: u64) -> Result<(), Error> {
        let _renewing = lock(&self.renewing);
        let grant = {
            let st = lock(&self.state);
            if st.closed {
                return Err(Error::Closed);
            }
            if st.generation != seen {
                return Ok(());
            }
            st.grant
        };
        let answer = self.renew_or_replace(grant);
        let mut st = lock(&self.state);
        let mut unused = None;
        let outcome = match answer {
            Ok((row, _)) if st.closed => {
                unused = Some(row.grant_ref());
                Err(Error::Closed)
            }
            Ok((row, sent)) => match st.core.rebind(&row) {
                Ok(()) => {
                    st.grant = Some(row.grant_ref());
                    st.generation += 1;
                    st.renew_due = row.renew_due(sent);
                    st.retry_in = row.retry_in();
                    Ok(())
                }
                Err(e) => {
                    unused =
                        (grant.map(|g| g.grant_id) != Some(row.grant_id)).then(|| row.grant_ref());
                    Err(e)
                }
            },
            Err(e) => Err(e),
        };
        st.attempts += 1;
        st.error = outcome.as_ref().err().cloned();
        self.changed.notify_all();
        drop(st);
        if let Some(g) = unused {
            let _ = self.registry.release(g, None, self.registry.deadline());
        }
        outcome
    }

    /// The registry's answer for `grant`: renewed, or a new grant when it was lost (or there
    /// is none). A lost grant is unbound at once, whatever the new acquire does.
    fn renew_or_replace(&self, grant: Option<GrantRef>) -> Result<(GrantRow, Instant), Error> {
        if let Some(g) = grant {
            match self.registry.renew(g, self.lease_ms) {
                Err(e) if is_lost(&e) => {
                    let mut st = lock(&self.state);
                    if st.grant.is_some_and(|b| b.grant_id == g.grant_id) {
                        st.grant = None;
                        st.core.unbind();
                    }
                    if st.closed {
                        return Err(Error::Closed);
                    }
                }
                answer => return answer,
            }
        }
        self.registry.acquire(C::KIND.sql(), self.lease_ms)
    }
}

impl<C: Core> Close for Shared<C> {
    /// Marks the generator closed and releases its grant, giving up at `deadline`. Never waits
    /// for a renewal in flight (a grant that one brings back after this is released by it).
    fn close_by(&self, deadline: Instant) -> Result<(), Error> {
        let (grant, last) = {
            let mut st = lock(&self.state);
            st.closed = true;
            self.changed.notify_all();
            (st.grant.take(), st.core.release_time_ms())
        };
        match grant {
            // A forked child closes without touching its parent's grant.
            Some(g) if !super::forked_since(self.forks) => self.registry.release(g, last, deadline),
            _ => Ok(()),
        }
    }
}

/// Renews at about half of what was left of the window (or at once when an id waits for it)
/// until the generator is closed.
fn background<C: Core>(weak: Weak<Shared<C>>) {
    loop {
        let Some(shared) = weak.upgrade() else { return };
        let generation = {
            let mut st = lock(&shared.state);
            loop {
                if st.closed {
                    return;
                }
                let now = Instant::now();
                if now >= st.renew_due {
                    break st.generation;
                }
                let wait = st.renew_due - now;
                st = shared
                    .changed
                    .wait_timeout(st, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        };
        if shared.renew(generation).is_err() {
            // The window holds until its end: try again soon.
            let mut st = lock(&shared.state);
            st.renew_due = Instant::now() + st.retry_in;
        }
    }
}

/// The shared part of a generator; closing it on drop.
struct Handle<C: Core>(Arc<Shared<C>>);

impl<C: Core> Drop for Handle<C> {
    fn drop(&mut self) {
        let _ = self.0.close_by(self.0.registry.deadline());
    }
}

impl<C: Core> Handle<C> {
    fn grant_info(&self) -> (i64, i64) {
        let st = lock(&self.0.state);
        (st.grant.map_or(-1, |g| g.grant_id), st.generation as i64)
    }
}

/// A Snowflake generator bound to a writer grant: worker id = the grant's slot, every id's
/// millisecond inside the grant's window, strictly increasing. Thread-safe (share it with an
/// `Arc` or by reference). Dropping it releases the grant, as [`GrantedSnowflake::close`].
pub struct GrantedSnowflake(Handle<SnowflakeCore>);

impl fmt::Debug for GrantedSnowflake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.0 .0.state);
        f.debug_struct("GrantedSnowflake")
            .field("slot", &st.core.0.slot())
            .field("window", &st.core.0.window())
            .finish_non_exhaustive()
    }
}

impl GrantedSnowflake {
    /// The next id. Waits while the millisecond is used up or the clock is a little behind;
    /// renews (or acquires a new grant) when the window is over; an error when the clock is
    /// outside what the registry grants, or the registry cannot be reached when it must be.
    pub fn next_id(&self) -> Result<i64, Error> {
        self.0 .0.next()
    }

    /// Releases the grant with the time of the last id made under it; later calls fail.
    /// Gives up after the registry's `timeout` (the window then just ends).
    pub fn close(&self) -> Result<(), Error> {
        self.0 .0.close_by(self.0 .0.registry.deadline())
    }

    /// The worker id (slot) of the grant bound now.
    pub fn worker(&self) -> u16 {
        lock(&self.0 .0.state).core.0.slot()
    }

    /// The Snowflake epoch (unix ms) the registry's grants use.
    pub fn epoch_ms(&self) -> i64 {
        lock(&self.0 .0.state).core.0.epoch_ms()
    }

    /// The grant bound now: its id (`idgen_grants.grant_id`; -1 once closed), and how many
    /// times the generator was rebound (renewals and new grants).
    pub fn grant(&self) -> (i64, i64) {
        self.0.grant_info()
    }

    /// The window `[lo, hi)` bound now, in unix ms.
    pub fn window_ms(&self) -> (i64, i64) {
        let st = lock(&self.0 .0.state);
        let (w, e) = (st.core.0.window(), st.core.0.epoch_ms());
        (w.lo.saturating_add(e), w.hi.saturating_add(e))
    }

    /// Renews the grant now (or acquires a new one if it was lost), as the background thread
    /// does at half the lease.
    pub fn renew(&self) -> Result<(), Error> {
        let generation = lock(&self.0 .0.state).generation;
        self.0 .0.renew(generation)
    }
}

/// An xid12 generator bound to a writer grant: machine id = the grant's slot, every id's
/// second inside the grant's window, strictly increasing. Thread-safe. Dropping it releases
/// the grant, as [`GrantedXid::close`].
pub struct GrantedXid(Handle<XidCore>);

impl fmt::Debug for GrantedXid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.0 .0.state);
        f.debug_struct("GrantedXid")
            .field("slot", &st.core.grant.slot())
            .field("window", &st.core.grant.window())
            .finish_non_exhaustive()
    }
}

impl GrantedXid {
    /// The next id (see [`GrantedSnowflake::next_id`]); the pid field is this process's, the
    /// counter starts at a random value.
    pub fn next_id(&self) -> Result<Xid, Error> {
        self.0 .0.next()
    }

    /// [`GrantedXid::next_id`], named as the Python client's.
    #[allow(clippy::new_ret_no_self, clippy::wrong_self_convention)]
    pub fn new(&self) -> Result<Xid, Error> {
        self.next_id()
    }

    /// Releases the grant with the time of the last id made under it; later calls fail.
    /// Gives up after the registry's `timeout` (the window then just ends).
    pub fn close(&self) -> Result<(), Error> {
        self.0 .0.close_by(self.0 .0.registry.deadline())
    }

    /// The machine id (slot) of the grant bound now.
    pub fn machine(&self) -> u32 {
        lock(&self.0 .0.state).core.grant.slot()
    }

    /// See [`GrantedSnowflake::grant`].
    pub fn grant(&self) -> (i64, i64) {
        self.0.grant_info()
    }

    /// The window `[lo, hi)` bound now, in unix seconds.
    pub fn window_s(&self) -> (i64, i64) {
        let w = lock(&self.0 .0.state).core.grant.window();
        (w.lo, w.hi)
    }

    /// See [`GrantedSnowflake::renew`].
    pub fn renew(&self) -> Result<(), Error> {
        let generation = lock(&self.0 .0.state).generation;
        self.0 .0.renew(generation)
    }
}
