//! The registry through sqlx (asynchronous, a `PgPool`). Renewal at about half of what was
//! left of the window is done in a tokio task that the first `next_id` after that time spawns
//! (it does not wait for it); at the window's end `next_id` waits for a renewal at most
//! `renew_wait`. Every statement is bounded by `timeout` (tokio's timer), so a tokio runtime
//! is needed.

use super::{
    acquire_sql, is_lost, not_installed, opt_lease_ms, quote_schema, release_sql, renew_sql,
    renewal_failed, unavailable, wait_for, window_unrenewed, Core, GrantRef, GrantRow, Settings,
    SnowflakeCore, XidCore, SCHEMA_COLUMN, SCHEMA_SQL,
};
use crate::{words, Error, Xid};
use idgen_core::grant::GrantStep;
use sqlx::postgres::{PgDatabaseError, PgPool, PgRow};
use sqlx::Row;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// A timestamptz as unix µs, in sqlx's binary form (µs since 2000-01-01 UTC; the crate has no
/// date-time library). `-infinity` and `infinity` saturate.
struct Timestamptz(i64);

/// Unix µs of 2000-01-01 00:00:00 UTC, PostgreSQL's epoch.
const PG_EPOCH_UNIX_US: i64 = 946_684_800_000_000;
const TIMESTAMPTZ_OID: sqlx::postgres::types::Oid = sqlx::postgres::types::Oid(1184);

impl sqlx::Type<sqlx::Postgres> for Timestamptz {
    fn type_info() -> sqlx::postgres::PgTypeInfo {
        sqlx::postgres::PgTypeInfo::with_oid(TIMESTAMPTZ_OID)
    }

    fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
        ty.oid() == Some(TIMESTAMPTZ_OID)
    }
}

impl sqlx::Encode<'_, sqlx::Postgres> for Timestamptz {
    fn encode_by_ref(
        &self,
        buf: &mut sqlx::postgres::PgArgumentBuffer,
    ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
        buf.extend_from_slice(&self.0.saturating_sub(PG_EPOCH_UNIX_US).to_be_bytes());
        Ok(sqlx::encode::IsNull::No)
    }

    fn size_hint(&self) -> usize {
        8
    }
}

impl<'r> sqlx::Decode<'r, sqlx::Postgres> for Timestamptz {
    fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
        match value.format() {
            sqlx::postgres::PgValueFormat::Binary => {
                let bytes: [u8; 8] = value.as_bytes()?.try_into()?;
                Ok(Timestamptz(
                    i64::from_be_bytes(bytes).saturating_add(PG_EPOCH_UNIX_US),
                ))
            }
            sqlx::postgres::PgValueFormat::Text => {
                Err("a timestamptz in text form is not read here".into())
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The server's refusal as a registry error (the message, then `": "` and the DETAIL, as the
/// postgres crate's registry words it); a failure of the connection or the pool as an
/// unavailable registry.
fn registry_error(e: sqlx::Error) -> Error {
    if let Some(db) = e.as_database_error() {
        let detail = db
            .try_downcast_ref::<PgDatabaseError>()
            .and_then(PgDatabaseError::detail);
        let message = words::refusal_message(db.message(), detail);
        return match db.code() {
            Some(code) => super::server_refusal(code.into_owned(), message),
            None => Error::Registry {
                sqlstate: None,
                message,
            },
        };
    }
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => unavailable(words::unreachable(&e)),
        other => Error::Registry {
            sqlstate: None,
            message: other.to_string(),
        },
    }
}

struct Inner {
    settings: Settings,
    pool: PgPool,
    schema: tokio::sync::OnceCell<String>,
}

impl Inner {
    fn deadline(&self) -> Instant {
        Instant::now() + self.settings.timeout
    }

    /// `work` (statements on the pool), given up at `deadline`: its future is dropped (the
    /// statement abandoned) and the registry is unavailable.
    async fn bounded<T>(
        &self,
        deadline: Instant,
        work: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        match tokio::time::timeout_at(deadline.into(), work).await {
            Ok(result) => result,
            Err(_) => Err(unavailable(words::no_answer_async(self.settings.timeout))),
        }
    }

    async fn schema(&self) -> Result<&str, Error> {
        self.schema
            .get_or_try_init(|| async {
                let row = sqlx::query(SCHEMA_SQL)
                    .persistent(false)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(registry_error)?
                    .ok_or_else(not_installed)?;
                let name: String = row.try_get(SCHEMA_COLUMN).map_err(registry_error)?;
                Ok(quote_schema(&name))
            })
            .await
            .map(String::as_str)
    }

    fn grant(row: PgRow) -> Result<GrantRow, Error> {
        let value = |i: usize| -> Result<i64, Error> { row.try_get(i).map_err(registry_error) };
        Ok(GrantRow {
            grant_id: value(0)?,
            token: value(1)?,
            slot: row.try_get::<i32, _>(2).map_err(registry_error)?.into(),
            lo_t: value(3)?,
            hi_t: value(4)?,
            epoch_ms: row.try_get(5).map_err(registry_error)?,
            server_t: value(6)?,
            server_us: row.try_get::<Timestamptz, _>(7).map_err(registry_error)?.0,
        })
    }

    /// A new grant of `kind` for `lease_ms`, or (`None`) the pool's default lease; and when
    /// its statement was sent.
    async fn acquire(
        &self,
        kind: &str,
        lease_ms: Option<i64>,
    ) -> Result<(GrantRow, Instant), Error> {
        self.bounded(self.deadline(), async {
            let schema = self.schema().await?;
            let sent = Instant::now();
            let row = sqlx::query(&acquire_sql(schema))
                .bind(kind)
                .bind(&self.settings.writer)
                .bind(lease_ms)
                .bind(&self.settings.pool)
                .persistent(false)
                .fetch_one(&self.pool)
                .await
                .map_err(registry_error)?;
            Ok((Self::grant(row)?, sent))
        })
        .await
    }

    /// Renews `grant` for `lease_ms`, or (`None`) its own lease.
    async fn renew(
        &self,
        grant: GrantRef,
        lease_ms: Option<i64>,
    ) -> Result<(GrantRow, Instant), Error> {
        self.bounded(self.deadline(), async {
            let sql = renew_sql(self.schema().await?);
            let sent = Instant::now();
            let row = sqlx::query(&sql)
                .bind(grant.grant_id)
                .bind(grant.token)
                .bind(lease_ms)
                .persistent(false)
                .fetch_one(&self.pool)
                .await
                .map_err(registry_error)?;
            Ok((Self::grant(row)?, sent))
        })
        .await
    }

    async fn release(
        &self,
        grant: GrantRef,
        last_ms: Option<i64>,
        deadline: Instant,
    ) -> Result<(), Error> {
        self.bounded(deadline, async {
            let sql = release_sql(self.schema().await?);
            sqlx::query(&sql)
                .bind(grant.grant_id)
                .bind(grant.token)
                .bind(last_ms.map(|ms| Timestamptz(ms.saturating_mul(1000))))
                .persistent(false)
                .fetch_all(&self.pool)
                .await
                .map(drop)
                .map_err(registry_error)
        })
        .await
    }
}

/// A writer registry reached through a sqlx `PgPool`. Each generator it makes holds a grant of
/// its own. Cheap to clone. Needs a tokio runtime.
#[derive(Clone)]
pub struct AsyncRegistry {
    inner: Arc<Inner>,
}

impl fmt::Debug for AsyncRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncRegistry")
            .field("writer", &self.inner.settings.writer)
            .field("pool", &self.inner.settings.pool)
            .finish_non_exhaustive()
    }
}

impl AsyncRegistry {
    /// A registry on `pool`; the writer is named `{hostname}:{pid}`.
    pub fn new(pool: PgPool) -> AsyncRegistry {
        AsyncRegistry::with(pool, Settings::default())
    }

    /// A registry on a pool of at most 2 connections to the database of `dsn`, made on first
    /// use, with an acquire timeout (connecting included) of `max(2 s, timeout)` (5 s by
    /// default). sqlx sets no TCP keepalive or user timeout: a dead link is found by the
    /// statement bound (`timeout`). Needs a tokio runtime.
    pub fn connect(dsn: &str) -> Result<AsyncRegistry, Error> {
        let options: sqlx::postgres::PgConnectOptions =
            dsn.parse().map_err(|e: sqlx::Error| Error::Registry {
                sqlstate: None,
                message: format!("not a connection string: {e}"),
            })?;
        let settings = Settings::default();
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(settings.timeout.max(Duration::from_secs(2)))
            .connect_lazy_with(options);
        Ok(AsyncRegistry::with(pool, settings))
    }

    fn with(pool: PgPool, settings: Settings) -> AsyncRegistry {
        AsyncRegistry {
            inner: Arc::new(Inner {
                settings,
                pool,
                schema: tokio::sync::OnceCell::new(),
            }),
        }
    }

    fn configure(self, f: impl FnOnce(&mut Settings)) -> AsyncRegistry {
        let mut settings = self.inner.settings.clone();
        f(&mut settings);
        AsyncRegistry::with(self.inner.pool.clone(), settings)
    }

    /// The writer's name, as `idgen_grants` and `idgen_writer_of` show it.
    pub fn writer(self, name: impl Into<String>) -> AsyncRegistry {
        let name = name.into();
        self.configure(|s| s.writer = name)
    }

    /// The registry pool to take grants from (default `app`).
    pub fn pool(self, pool: impl Into<String>) -> AsyncRegistry {
        let pool = pool.into();
        self.configure(|s| s.pool = pool)
    }

    /// How long a clock before the window (or, Snowflake, stepped back) is waited out before
    /// `next_id` fails (default 5 s).
    pub fn max_wait(self, wait: Duration) -> AsyncRegistry {
        let ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
        self.configure(|s| s.max_wait_ms = ms)
    }

    /// How long `next_id` waits at the window's end for the renewal task to bring a window
    /// before it returns [`Error::RegistryUnavailable`] (default 1 s).
    pub fn renew_wait(self, wait: Duration) -> AsyncRegistry {
        self.configure(|s| s.renew_wait = wait)
    }

    /// How long one statement may take (waiting for a pooled connection included) before it
    /// is abandoned (default 5 s; at least 1 ms); also the bound of `close()`.
    pub fn timeout(self, timeout: Duration) -> AsyncRegistry {
        let timeout = timeout.max(Duration::from_millis(1));
        self.configure(|s| s.timeout = timeout)
    }

    /// Another clock, in unix milliseconds.
    pub fn clock(self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> AsyncRegistry {
        let clock = Arc::new(clock);
        self.configure(|s| s.clock = clock)
    }

    pub fn writer_name(&self) -> &str {
        &self.inner.settings.writer
    }

    /// A Snowflake generator bound to a grant of `lease` (at least 1 s), or with `None` of the
    /// pool's default lease for Snowflake (the server's), acquired now.
    pub async fn snowflake(
        &self,
        lease: impl Into<Option<Duration>>,
    ) -> Result<AsyncGrantedSnowflake, Error> {
        Ok(AsyncGrantedSnowflake(self.start(lease.into()).await?))
    }

    /// An xid12 generator bound to a grant of `lease` (at least 1 s), or with `None` of the
    /// pool's default lease for xid12, acquired now.
    pub async fn xid12(
        &self,
        lease: impl Into<Option<Duration>>,
    ) -> Result<AsyncGrantedXid, Error> {
        Ok(AsyncGrantedXid(self.start(lease.into()).await?))
    }

    async fn start<C: Core>(&self, lease: Option<Duration>) -> Result<Handle<C>, Error> {
        let lease_ms = opt_lease_ms(lease)?;
        let (row, sent) = self.inner.acquire(C::KIND.sql(), lease_ms).await?;
        let core = match C::start(&row, self.inner.settings.max_wait_ms) {
            Ok(core) => core,
            Err(e) => {
                let _ = self
                    .inner
                    .release(row.grant_ref(), None, self.inner.deadline())
                    .await;
                return Err(e);
            }
        };
        Ok(Handle(Arc::new(Shared {
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
                in_flight: false,
                closed: false,
            }),
            renewing: tokio::sync::Mutex::new(()),
            changed: tokio::sync::watch::channel(0).0,
        })))
    }
}

struct State<C> {
    core: C,
    /// The grant bound now; `None` once closed, or after a grant was lost and no new one came.
    grant: Option<GrantRef>,
    generation: u64,
    renew_due: Instant,
    retry_in: Duration,
    /// Renewals (or acquires) finished, and how the last one failed.
    attempts: u64,
    error: Option<Error>,
    /// A renewal task runs.
    in_flight: bool,
    closed: bool,
}

impl<C: Core> State<C> {
    fn hi_ms(&self) -> Option<i64> {
        self.grant.map(|_| self.core.window_end_ms())
    }
}

struct Shared<C> {
    registry: Arc<Inner>,
    lease_ms: Option<i64>,
    forks: u64,
    state: Mutex<State<C>>,
    /// Held across a renewal's round trips; never by an id call or `close()`.
    renewing: tokio::sync::Mutex<()>,
    /// Bumped when a renewal finished (or the generator closed).
    changed: tokio::sync::watch::Sender<u64>,
}

impl<C: Core> Shared<C> {
    async fn next(self: &Arc<Self>) -> Result<C::Id, Error> {
        if super::forked_since(self.forks) {
            return Err(Error::Forked);
        }
        // Renewal at half of what was left, in a task: the window is still good.
        let due = {
            let mut st = lock(&self.state);
            let due = !st.closed && !st.in_flight && Instant::now() >= st.renew_due;
            if due {
                st.in_flight = true;
            }
            due.then_some(st.generation)
        };
        if let Some(generation) = due {
            self.spawn_renewal(generation);
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
                GrantStep::WaitUntil(t) => tokio::time::sleep(wait_for(t, now)).await,
                GrantStep::Renew => {
                    if renewals == 2 {
                        return Err(lock(&self.state).core.after_window(now).into());
                    }
                    renewals += 1;
                    self.await_window(generation).await?;
                }
            }
        }
    }

    /// A task that renews the grant bound at `seen`; the caller set `in_flight`.
    fn spawn_renewal(self: &Arc<Self>, seen: u64) {
        let shared = self.clone();
        tokio::spawn(async move {
            let result = {
                let _guard = shared.renewing.lock().await;
                shared.renew_locked(seen).await
            };
            {
                let mut st = lock(&shared.state);
                st.in_flight = false;
                if result.is_err() {
                    st.renew_due = Instant::now() + st.retry_in;
                }
            }
            // Wakes a waiter even when there was nothing to do (renewed meanwhile).
            shared.changed.send_modify(|n| *n += 1);
        });
    }

    /// At the window's end (or without a grant): has a renewal task run (one is started unless
    /// one runs) and waits for a new window at most `renew_wait`; never waits on the network
    /// longer. The renewal's refusal, or `RegistryUnavailable` when nothing came back in time.
    async fn await_window(self: &Arc<Self>, seen: u64) -> Result<(), Error> {
        let wait = self.registry.settings.renew_wait;
        let deadline = tokio::time::Instant::now() + wait;
        let mut changed = self.changed.subscribe();
        let attempts = lock(&self.state).attempts;
        loop {
            let start = {
                let mut st = lock(&self.state);
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
                // None runs (or the one that ran had nothing to do): start one.
                let start = !st.in_flight;
                st.in_flight = true;
                start
            };
            if start {
                self.spawn_renewal(seen);
            }
            if !matches!(
                tokio::time::timeout_at(deadline, changed.changed()).await,
                Ok(Ok(()))
            ) {
                let st = lock(&self.state);
                if st.generation != seen {
                    return Ok(());
                }
                return Err(window_unrenewed(st.hi_ms(), wait));
            }
        }
    }

    /// Renews the grant bound at `seen` (unless that was done meanwhile), or acquires a new
    /// one when it is lost; the caller holds `renewing`.
    async fn renew_locked(&self, seen: u64) -> Result<(), Error> {
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
        let answer = self.renew_or_replace(grant).await;
        let mut unused = None;
        let outcome = {
            let mut st = lock(&self.state);
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
                        unused = (grant.map(|g| g.grant_id) != Some(row.grant_id))
                            .then(|| row.grant_ref());
                        Err(e)
                    }
                },
                Err(e) => Err(e),
            };
            st.attempts += 1;
            st.error = outcome.as_ref().err().cloned();
            outcome
        };
        self.changed.send_modify(|n| *n += 1);
        if let Some(g) = unused {
            let _ = self
                .registry
                .release(g, None, self.registry.deadline())
                .await;
        }
        outcome
    }

    /// The registry's answer for `grant`: renewed, or a new grant when it was lost (or there
    /// is none). A lost grant is unbound at once, whatever the new acquire does.
    async fn renew_or_replace(
        &self,
        grant: Option<GrantRef>,
    ) -> Result<(GrantRow, Instant), Error> {
        if let Some(g) = grant {
            match self.registry.renew(g, self.lease_ms).await {
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
        self.registry.acquire(C::KIND.sql(), self.lease_ms).await
    }

    /// Marks the generator closed and says what to release (nothing in a forked child).
    fn take_for_release(&self) -> Option<(GrantRef, Option<i64>)> {
        let mut st = lock(&self.state);
        st.closed = true;
        let grant = st.grant.take()?;
        (!super::forked_since(self.forks)).then(|| (grant, st.core.release_time_ms()))
    }

    /// Releases the grant, giving up after the registry's `timeout`; never waits for a renewal
    /// in flight (a grant that one brings back after this is released by it).
    async fn close(&self) -> Result<(), Error> {
        let taken = self.take_for_release();
        self.changed.send_modify(|n| *n += 1);
        match taken {
            Some((grant, last)) => {
                self.registry
                    .release(grant, last, self.registry.deadline())
                    .await
            }
            None => Ok(()),
        }
    }

    async fn renew_now(&self) -> Result<(), Error> {
        let _guard = self.renewing.lock().await;
        let generation = lock(&self.state).generation;
        self.renew_locked(generation).await
    }
}

struct Handle<C: Core>(Arc<Shared<C>>);

impl<C: Core> Drop for Handle<C> {
    /// Not closed: release in a task on the current tokio runtime, if there is one.
    fn drop(&mut self) {
        if lock(&self.0.state).closed {
            return;
        }
        let shared = self.0.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = shared.close().await;
            });
        } else {
            shared.take_for_release();
        }
    }
}

impl<C: Core> Handle<C> {
    fn grant_info(&self) -> (i64, i64) {
        let st = lock(&self.0.state);
        (st.grant.map_or(-1, |g| g.grant_id), st.generation as i64)
    }
}

/// [`GrantedSnowflake`](super::GrantedSnowflake) for sqlx: a Snowflake generator bound to a
/// writer grant. Close it with `close().await`; a generator dropped unclosed releases its grant
/// in a task on the current tokio runtime.
pub struct AsyncGrantedSnowflake(Handle<SnowflakeCore>);

impl fmt::Debug for AsyncGrantedSnowflake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.0 .0.state);
        f.debug_struct("AsyncGrantedSnowflake")
            .field("slot", &st.core.0.slot())
            .field("window", &st.core.0.window())
            .finish_non_exhaustive()
    }
}

impl AsyncGrantedSnowflake {
    pub async fn next_id(&self) -> Result<i64, Error> {
        self.0 .0.next().await
    }

    pub async fn close(&self) -> Result<(), Error> {
        self.0 .0.close().await
    }

    pub fn worker(&self) -> u16 {
        lock(&self.0 .0.state).core.0.slot()
    }

    pub fn epoch_ms(&self) -> i64 {
        lock(&self.0 .0.state).core.0.epoch_ms()
    }

    /// The grant bound now (-1 once closed) and how many times the generator was rebound.
    pub fn grant(&self) -> (i64, i64) {
        self.0.grant_info()
    }

    /// The window `[lo, hi)` bound now, in unix ms.
    pub fn window_ms(&self) -> (i64, i64) {
        let st = lock(&self.0 .0.state);
        let (w, e) = (st.core.0.window(), st.core.0.epoch_ms());
        (w.lo.saturating_add(e), w.hi.saturating_add(e))
    }

    /// Renews the grant now (or acquires a new one if it was lost).
    pub async fn renew(&self) -> Result<(), Error> {
        self.0 .0.renew_now().await
    }
}

/// [`GrantedXid`](super::GrantedXid) for sqlx: an xid12 generator bound to a writer grant.
pub struct AsyncGrantedXid(Handle<XidCore>);

impl fmt::Debug for AsyncGrantedXid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = lock(&self.0 .0.state);
        f.debug_struct("AsyncGrantedXid")
            .field("slot", &st.core.grant.slot())
            .field("window", &st.core.grant.window())
            .finish_non_exhaustive()
    }
}

impl AsyncGrantedXid {
    pub async fn next_id(&self) -> Result<Xid, Error> {
        self.0 .0.next().await
    }

    /// [`AsyncGrantedXid::next_id`], named as the Python client's.
    #[allow(clippy::new_ret_no_self, clippy::wrong_self_convention)]
    pub async fn new(&self) -> Result<Xid, Error> {
        self.next_id().await
    }

    pub async fn close(&self) -> Result<(), Error> {
        self.0 .0.close().await
    }

    pub fn machine(&self) -> u32 {
        lock(&self.0 .0.state).core.grant.slot()
    }

    pub fn grant(&self) -> (i64, i64) {
        self.0.grant_info()
    }

    /// The window `[lo, hi)` bound now, in unix seconds.
    pub fn window_s(&self) -> (i64, i64) {
        let w = lock(&self.0 .0.state).core.grant.window();
        (w.lo, w.hi)
    }

    pub async fn renew(&self) -> Result<(), Error> {
        self.0 .0.renew_now().await
    }
}
