//! The registry through sqlx (asynchronous, a `PgPool`). Renewal at about half the lease is
//! done inline, by the first `next_id` after that time (no task is spawned); waits sleep with
//! tokio's timer, so a tokio runtime is needed.

use super::{
    acquire_sql, is_lost, lease_ms, not_installed, release_sql, renew_after, renew_sql,
    retry_after, wait_for, Core, GrantRef, GrantRow, Settings, SnowflakeCore, XidCore, SCHEMA_SQL,
};
use crate::{Error, Xid};
use idgen_core::grant::GrantStep;
use sqlx::postgres::{PgPool, PgRow};
use sqlx::Row;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn registry_error(e: sqlx::Error) -> Error {
    match e.as_database_error() {
        Some(db) => Error::Registry {
            sqlstate: db.code().map(|c| c.into_owned()),
            message: db.message().to_string(),
        },
        None => Error::Registry {
            sqlstate: None,
            message: e.to_string(),
        },
    }
}

struct Inner {
    settings: Settings,
    pool: PgPool,
    schema: tokio::sync::OnceCell<String>,
}

impl Inner {
    async fn schema(&self) -> Result<&str, Error> {
        self.schema
            .get_or_try_init(|| async {
                let found: Option<String> = sqlx::query_scalar(SCHEMA_SQL)
                    .persistent(false)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(registry_error)?;
                found.ok_or_else(not_installed)
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
            lo_ms: value(3)?,
            hi_ms: value(4)?,
            epoch_ms: row.try_get(5).map_err(registry_error)?,
        })
    }

    async fn acquire(&self, kind: &str, lease_ms: i64) -> Result<GrantRow, Error> {
        let sql = acquire_sql(self.schema().await?);
        let row = sqlx::query(&sql)
            .bind(kind)
            .bind(&self.settings.writer)
            .bind(lease_ms)
            .bind(&self.settings.pool)
            .persistent(false)
            .fetch_one(&self.pool)
            .await
            .map_err(registry_error)?;
        Self::grant(row)
    }

    async fn renew(&self, grant: GrantRef, lease_ms: i64) -> Result<GrantRow, Error> {
        let sql = renew_sql(self.schema().await?);
        let row = sqlx::query(&sql)
            .bind(grant.grant_id)
            .bind(grant.token)
            .bind(lease_ms)
            .persistent(false)
            .fetch_one(&self.pool)
            .await
            .map_err(registry_error)?;
        Self::grant(row)
    }

    async fn release(&self, grant: GrantRef, last_ms: Option<i64>) -> Result<(), Error> {
        let sql = release_sql(self.schema().await?);
        sqlx::query(&sql)
            .bind(grant.grant_id)
            .bind(grant.token)
            .bind(last_ms)
            .persistent(false)
            .fetch_all(&self.pool)
            .await
            .map(drop)
            .map_err(registry_error)
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

    /// Another clock, in unix milliseconds.
    pub fn clock(self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> AsyncRegistry {
        let clock = Arc::new(clock);
        self.configure(|s| s.clock = clock)
    }

    pub fn writer_name(&self) -> &str {
        &self.inner.settings.writer
    }

    /// A Snowflake generator bound to a grant of `lease` (at least 1 s), acquired now.
    pub async fn snowflake(&self, lease: Duration) -> Result<AsyncGrantedSnowflake, Error> {
        Ok(AsyncGrantedSnowflake(self.start(lease).await?))
    }

    /// An xid12 generator bound to a grant of `lease` (at least 1 s), acquired now.
    pub async fn xid12(&self, lease: Duration) -> Result<AsyncGrantedXid, Error> {
        Ok(AsyncGrantedXid(self.start(lease).await?))
    }

    async fn start<C: Core>(&self, lease: Duration) -> Result<Handle<C>, Error> {
        let lease_ms = lease_ms(lease)?;
        let sent = Instant::now();
        let row = self.inner.acquire(C::KIND.sql(), lease_ms).await?;
        let core = match C::start(&row, self.inner.settings.max_wait_ms) {
            Ok(core) => core,
            Err(e) => {
                let _ = self.inner.release(row.grant_ref(), None).await;
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
                renew_due: sent + renew_after(lease_ms),
                closed: false,
            }),
            renewing: tokio::sync::Mutex::new(()),
        })))
    }
}

struct State<C> {
    core: C,
    grant: Option<GrantRef>,
    generation: u64,
    renew_due: Instant,
    closed: bool,
}

struct Shared<C> {
    registry: Arc<Inner>,
    lease_ms: i64,
    forks: u64,
    state: Mutex<State<C>>,
    renewing: tokio::sync::Mutex<()>,
}

impl<C: Core> Shared<C> {
    async fn next(&self) -> Result<C::Id, Error> {
        if super::forked_since(self.forks) {
            return Err(Error::Forked);
        }
        // Renewal at half the lease, by whoever comes first; a failure waits for the next try
        // (the window is still good; when it is over the renewal below must succeed).
        let due = {
            let st = lock(&self.state);
            (!st.closed && Instant::now() >= st.renew_due).then_some(st.generation)
        };
        if let Some(generation) = due {
            if let Ok(guard) = self.renewing.try_lock() {
                if self.renew_locked(generation).await.is_err() {
                    lock(&self.state).renew_due = Instant::now() + retry_after(self.lease_ms);
                }
                drop(guard);
            }
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
                    let _guard = self.renewing.lock().await;
                    self.renew_locked(generation).await?;
                }
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
        let sent = Instant::now();
        let kind = C::KIND.sql();
        let row = match grant {
            Some(g) => match self.registry.renew(g, self.lease_ms).await {
                Ok(row) => row,
                Err(e) if is_lost(&e) => self.registry.acquire(kind, self.lease_ms).await?,
                Err(e) => return Err(e),
            },
            None => self.registry.acquire(kind, self.lease_ms).await?,
        };
        let rebound = {
            let mut st = lock(&self.state);
            let r = st.core.rebind(&row);
            if r.is_ok() {
                st.grant = Some(row.grant_ref());
                st.generation += 1;
                st.renew_due = sent + renew_after(self.lease_ms);
            }
            r
        };
        if rebound.is_err() {
            let _ = self.registry.release(row.grant_ref(), None).await;
        }
        rebound
    }

    /// Marks the generator closed and says what to release (nothing in a forked child).
    fn take_for_release(&self) -> Option<(GrantRef, Option<i64>)> {
        let mut st = lock(&self.state);
        st.closed = true;
        let grant = st.grant.take()?;
        (!super::forked_since(self.forks)).then(|| (grant, st.core.release_time_ms()))
    }

    async fn close(&self) -> Result<(), Error> {
        let _guard = self.renewing.lock().await;
        match self.take_for_release() {
            Some((grant, last)) => self.registry.release(grant, last).await,
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

    pub async fn renew(&self) -> Result<(), Error> {
        self.0 .0.renew_now().await
    }
}
