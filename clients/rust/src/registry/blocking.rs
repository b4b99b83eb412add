//! The registry through the `postgres` crate (synchronous), with renewal in a background thread.

use super::{
    acquire_sql, is_lost, lease_ms, not_installed, release_sql, renew_after, renew_sql,
    retry_after, wait_for, Core, GrantRef, GrantRow, Settings, SnowflakeCore, XidCore, SCHEMA_SQL,
};
use crate::{Error, Xid};
use idgen_core::grant::GrantStep;
use postgres::types::ToSql;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

type Connect = dyn Fn() -> Result<postgres::Client, postgres::Error> + Send + Sync;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn registry_error(e: postgres::Error) -> Error {
    match e.as_db_error() {
        Some(db) => Error::Registry {
            sqlstate: Some(db.code().code().to_string()),
            message: match db.detail() {
                Some(detail) => format!("{}: {detail}", db.message()),
                None => db.message().to_string(),
            },
        },
        None => Error::Registry {
            sqlstate: e.code().map(|c| c.code().to_string()),
            message: e.to_string(),
        },
    }
}

/// The connection, made on first use and again after it broke, with the extension's schema.
struct Conn {
    client: postgres::Client,
    schema: String,
}

struct Inner {
    settings: Settings,
    connect: Arc<Connect>,
    conn: Mutex<Option<Conn>>,
    generators: Mutex<Vec<Weak<dyn Close>>>,
}

impl Inner {
    /// Runs one query on the registry's connection (reconnecting when needed).
    fn query(
        &self,
        sql: impl Fn(&str) -> String,
        params: &[(&(dyn ToSql + Sync), postgres::types::Type)],
    ) -> Result<Vec<postgres::Row>, Error> {
        let mut guard = lock(&self.conn);
        if guard.as_ref().is_none_or(|c| c.client.is_closed()) {
            let mut client = (self.connect)().map_err(registry_error)?;
            let schema: String = client
                .query_typed_opt(SCHEMA_SQL, &[])
                .map_err(registry_error)?
                .ok_or_else(not_installed)?
                .get(0);
            *guard = Some(Conn { client, schema });
        }
        let conn = guard.as_mut().expect("connected above");
        let result = conn.client.query_typed(&sql(&conn.schema), params);
        result.map_err(|e| {
            if e.as_db_error().is_none() {
                // Not the server's answer: the connection may be broken; make a new one next.
                *guard = None;
            }
            registry_error(e)
        })
    }

    fn grant(rows: Vec<postgres::Row>) -> Result<GrantRow, Error> {
        let row = rows.into_iter().next().ok_or_else(|| Error::Registry {
            sqlstate: None,
            message: "the registry returned no grant".into(),
        })?;
        let value =
            |i: usize| -> Result<i64, Error> { row.try_get::<_, i64>(i).map_err(registry_error) };
        Ok(GrantRow {
            grant_id: value(0)?,
            token: value(1)?,
            slot: row.try_get::<_, i32>(2).map_err(registry_error)?.into(),
            lo_ms: value(3)?,
            hi_ms: value(4)?,
            epoch_ms: row.try_get::<_, Option<i64>>(5).map_err(registry_error)?,
        })
    }

    fn acquire(&self, kind: &str, lease_ms: i64) -> Result<GrantRow, Error> {
        use postgres::types::Type;
        let s = &self.settings;
        Self::grant(self.query(
            acquire_sql,
            &[
                (&kind, Type::TEXT),
                (&s.writer, Type::TEXT),
                (&lease_ms, Type::INT8),
                (&s.pool, Type::TEXT),
            ],
        )?)
    }

    fn renew(&self, grant: GrantRef, lease_ms: i64) -> Result<GrantRow, Error> {
        use postgres::types::Type;
        Self::grant(self.query(
            renew_sql,
            &[
                (&grant.grant_id, Type::INT8),
                (&grant.token, Type::INT8),
                (&lease_ms, Type::INT8),
            ],
        )?)
    }

    fn release(&self, grant: GrantRef, last_ms: Option<i64>) -> Result<(), Error> {
        use postgres::types::Type;
        self.query(
            release_sql,
            &[
                (&grant.grant_id, Type::INT8),
                (&grant.token, Type::INT8),
                (&last_ms, Type::INT8),
            ],
        )
        .map(drop)
    }
}

/// A writer registry reached through the `postgres` crate: a factory of connections (one is
/// kept, and made again when it breaks) and a writer name. Each generator it makes holds a
/// grant of its own. Cheap to clone; clones share the connection and the generators.
///
/// ```no_run
/// use pg_idgen_client::registry::Registry;
/// use std::time::Duration;
/// let registry = Registry::new(|| postgres::Client::connect("host=/run/postgresql", postgres::NoTls));
/// let ids = registry.snowflake(Duration::from_secs(600))?;
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
    pub fn new<F>(connect: F) -> Registry
    where
        F: Fn() -> Result<postgres::Client, postgres::Error> + Send + Sync + 'static,
    {
        Registry::with(Arc::new(connect), Settings::default())
    }

    fn with(connect: Arc<Connect>, settings: Settings) -> Registry {
        Registry {
            inner: Arc::new(Inner {
                settings,
                connect,
                conn: Mutex::new(None),
                generators: Mutex::new(Vec::new()),
            }),
        }
    }

    fn configure(self, f: impl FnOnce(&mut Settings)) -> Registry {
        let mut settings = self.inner.settings.clone();
        f(&mut settings);
        Registry::with(self.inner.connect.clone(), settings)
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

    /// Another clock, in unix milliseconds (tests run writers ahead and behind).
    pub fn clock(self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Registry {
        let clock = Arc::new(clock);
        self.configure(|s| s.clock = clock)
    }

    pub fn writer_name(&self) -> &str {
        &self.inner.settings.writer
    }

    /// A Snowflake generator bound to a grant of `lease` (at least 1 s), acquired now.
    pub fn snowflake(&self, lease: Duration) -> Result<GrantedSnowflake, Error> {
        Ok(GrantedSnowflake(self.start(lease)?))
    }

    /// An xid12 generator bound to a grant of `lease` (at least 1 s), acquired now.
    pub fn xid12(&self, lease: Duration) -> Result<GrantedXid, Error> {
        Ok(GrantedXid(self.start(lease)?))
    }

    fn start<C: Core>(&self, lease: Duration) -> Result<Handle<C>, Error> {
        let lease_ms = lease_ms(lease)?;
        let sent = Instant::now();
        let row = self.inner.acquire(C::KIND.sql(), lease_ms)?;
        let core = match C::start(&row, self.inner.settings.max_wait_ms) {
            Ok(core) => core,
            Err(e) => {
                let _ = self.inner.release(row.grant_ref(), None);
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
                renew_due: sent + renew_after(lease_ms),
                closed: false,
            }),
            renewing: Mutex::new(()),
            wake: Condvar::new(),
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
    /// grants; the first error is returned after all were tried.
    pub fn close(&self) -> Result<(), Error> {
        let generators: Vec<_> = lock(&self.inner.generators).drain(..).collect();
        let mut first = Ok(());
        for g in generators.iter().filter_map(Weak::upgrade) {
            let r = g.close();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

trait Close: Send + Sync {
    fn close(&self) -> Result<(), Error>;
}

struct State<C> {
    core: C,
    /// The grant bound now; `None` once closed.
    grant: Option<GrantRef>,
    /// Moves on at each rebind: a renewal asked for under an older one is already done.
    generation: u64,
    renew_due: Instant,
    closed: bool,
}

struct Shared<C> {
    registry: Arc<Inner>,
    lease_ms: i64,
    /// The fork count when the grant was acquired; a forked child must not use it.
    forks: u64,
    state: Mutex<State<C>>,
    /// Held across a renewal's or a release's round trip (before `state`, never after).
    renewing: Mutex<()>,
    /// Wakes the background thread at close.
    wake: Condvar,
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
                    // The first renewal may find another thread's already done.
                    if renewals == 2 {
                        return Err(lock(&self.state).core.after_window(now).into());
                    }
                    renewals += 1;
                    self.renew(generation)?;
                }
            }
        }
    }

    /// Renews the grant bound at `seen` (unless that was done meanwhile); when it is lost,
    /// acquires a new one. Either way the core is rebound to the answer.
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
        let sent = Instant::now();
        let row = match grant.map(|g| self.registry.renew(g, self.lease_ms)) {
            Some(Ok(row)) => row,
            None => self.registry.acquire(C::KIND.sql(), self.lease_ms)?,
            Some(Err(e)) if is_lost(&e) => self.registry.acquire(C::KIND.sql(), self.lease_ms)?,
            Some(Err(e)) => return Err(e),
        };
        let mut st = lock(&self.state);
        if let Err(e) = st.core.rebind(&row) {
            drop(st);
            let _ = self.registry.release(row.grant_ref(), None);
            return Err(e);
        }
        st.grant = Some(row.grant_ref());
        st.generation += 1;
        st.renew_due = sent + renew_after(self.lease_ms);
        Ok(())
    }
}

impl<C: Core> Close for Shared<C> {
    fn close(&self) -> Result<(), Error> {
        let _renewing = lock(&self.renewing);
        let (grant, last) = {
            let mut st = lock(&self.state);
            st.closed = true;
            self.wake.notify_all();
            (st.grant.take(), st.core.release_time_ms())
        };
        match grant {
            // A forked child closes without touching its parent's grant.
            Some(g) if !super::forked_since(self.forks) => self.registry.release(g, last),
            _ => Ok(()),
        }
    }
}

/// Renews at about half the lease until the generator is closed.
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
                    .wake
                    .wait_timeout(st, wait)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        };
        if shared.renew(generation).is_err() {
            // The id path renews synchronously when it must; try again before that.
            let mut st = lock(&shared.state);
            st.renew_due = Instant::now() + retry_after(shared.lease_ms);
        }
    }
}

/// The shared part of a generator; closing it on drop.
struct Handle<C: Core>(Arc<Shared<C>>);

impl<C: Core> Drop for Handle<C> {
    fn drop(&mut self) {
        let _ = self.0.close();
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
    pub fn close(&self) -> Result<(), Error> {
        self.0 .0.close()
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
        (w.lo + e, w.hi + e)
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
    pub fn close(&self) -> Result<(), Error> {
        self.0 .0.close()
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
