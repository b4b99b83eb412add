//! Edge devices: a grant of the writer registry kept in the device's own SQLite file, so that a
//! phone or an IoT box makes ids offline for days and merges its rows into PostgreSQL later
//! (feature `edge`). The Rust twin of the Python client's `pg_idgen.EdgeStore`: the same table,
//! `pg_idgen_edge`, with the same columns and meanings, so a file written by one client is read
//! by the other.
//!
//! [`EdgeStore`] keeps one grant per kind in that table, with the generator's high-water mark
//! (the last id made). [`EdgeStore::enrol`] takes a grant of the registry's `'edge'` pool
//! (weeks long); [`EdgeStore::next_id`] makes the next id inside its window and writes the new
//! mark on the SQLite connection without committing, so the caller's transaction that stores
//! the row keyed by the id commits both, and a reopened file never repeats a committed id;
//! [`EdgeStore::sync`] reports to the registry (`idgen_report`, which finds a copy of the file
//! used by a second device) and renews or releases the grant. The clock decides only whether
//! an id can be made: outside the window, `next_id` refuses.
//!
//! The offline rule (which id, or which refusal, and the window's end at a release) is the
//! core's, [`idgen_core::grant::edge`] (docs/formats.md §10, pinned by
//! `tests/vectors/edge_traces.json`, which this module's tests run through the store): this
//! module reads and writes the file and talks to the registry.
//!
//! ```no_run
//! use pg_idgen_client::edge::{EdgeStore, Kind, DEFAULT_EDGE_LEASE};
//! let db = rusqlite::Connection::open("app.db")?;
//! let store = EdgeStore::new(&db, Kind::Xid12, None)?;
//! let mut pg = postgres::Client::connect("host=/run/postgresql dbname=app", postgres::NoTls)?;
//! store.enrol(&mut pg, Some("field-app@phone-17"), DEFAULT_EDGE_LEASE, "edge")?;
//!
//! // Offline: the row and the new high-water mark commit together.
//! let tx = db.unchecked_transaction()?;
//! let id = store.next_id()?;
//! tx.execute("INSERT INTO notes (id, body) VALUES (?1, ?2)", (id.to_string(), "hello"))?;
//! tx.commit()?;
//!
//! // Back online: report and renew (or `None`: report and release).
//! store.sync(&mut pg, Some(DEFAULT_EDGE_LEASE))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use crate::registry::Kind;

use crate::error::EdgeWindow;
use crate::registry::{
    lease_ms, moment_or_never, not_installed, quote_schema, registry_error, times_unit,
    SCHEMA_COLUMN, SCHEMA_SQL,
};
use crate::{words, Error, Xid};
use idgen_core::grant::edge::{
    EdgeError, EdgeId as CoreId, EdgeKind, EdgeRefusal, EdgeState, XidSeed,
};
use idgen_core::xid::MAX_COUNTER;
use postgres::error::SqlState;
use postgres::types::Type;
use rusqlite::types::Value;
use rusqlite::{params, Connection, OptionalExtension};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The lease `enrol` and `sync` ask for unless told otherwise: 28 days (pool `'edge'` allows
/// up to 366).
pub const DEFAULT_EDGE_LEASE: Duration = Duration::from_secs(28 * 86_400);

/// The table, exactly as the Python client creates it: one row per kind. Both clients' statements
/// are `tests/vectors/edge_store.json`'s (their tests compare them), so a file works with either.
pub const TABLE_SQL: &str = "
CREATE TABLE IF NOT EXISTS pg_idgen_edge (
    kind text PRIMARY KEY CHECK (kind IN ('xid12', 'snowflake')),
    grant_id integer NOT NULL,
    token integer NOT NULL,
    slot integer NOT NULL,
    lo_us integer NOT NULL,  -- the window [lo, hi) in unix microseconds
    hi_us integer NOT NULL,
    epoch_ms integer,        -- the Snowflake epoch of the grant; NULL for xid12
    writer text NOT NULL,
    syncs integer NOT NULL DEFAULT 0,  -- the count the registry gave at the last report
    last_id,                 -- the high-water mark: the last id made (xid12 text, Snowflake int)
    last_id_us integer,      -- its id-time in unix microseconds
    cloned text,             -- set when the registry found this state on another device
    attempt integer          -- the number of the report being sent, kept until its reply arrives
)";

const COLUMNS: &str =
    "grant_id, token, slot, lo_us, hi_us, epoch_ms, writer, syncs, last_id, last_id_us, cloned, attempt";

/// How many times `next_id` reads the mark again when another connection moved it in between.
const MAX_TRIES: usize = 1000;

/// A report's attempt number: random (std's per-process hash keys, with the clock and the
/// process id mixed in), positive. A copy of the file reports with a number of its own.
fn attempt_number() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    (h.finish() >> 1).max(1) as i64
}

/// An id an edge store made: an xid12 or a Snowflake id, as the store's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EdgeId {
    Xid(Xid),
    Snowflake(i64),
}

impl EdgeId {
    /// The xid12, if the store's kind is xid12.
    pub fn xid(self) -> Option<Xid> {
        match self {
            EdgeId::Xid(x) => Some(x),
            EdgeId::Snowflake(_) => None,
        }
    }

    /// The Snowflake id, if the store's kind is Snowflake.
    pub fn snowflake(self) -> Option<i64> {
        match self {
            EdgeId::Snowflake(id) => Some(id),
            EdgeId::Xid(_) => None,
        }
    }
}

/// The xid12's 20-character text, or the Snowflake id in decimal.
impl fmt::Display for EdgeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EdgeId::Xid(x) => fmt::Display::fmt(x, f),
            EdgeId::Snowflake(id) => fmt::Display::fmt(id, f),
        }
    }
}

/// The grant an edge store holds (the token is not shown). Times in unix microseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeGrant {
    pub grant_id: i64,
    pub kind: Kind,
    /// The xid12 machine id, or the Snowflake worker id.
    pub slot: i64,
    /// The window `[lo_us, hi_us)`.
    pub lo_us: i64,
    pub hi_us: i64,
    /// The Snowflake epoch of the grant (unix ms); `None` for xid12.
    pub epoch_ms: Option<i64>,
    pub writer: String,
    /// The count the registry gave at the last report (0 before the first).
    pub syncs: i64,
    /// The high-water mark: the last id made, and its id-time.
    pub last_id: Option<EdgeId>,
    pub last_id_us: Option<i64>,
    /// Set when the registry found this state on another device (the message kept).
    pub cloned: Option<String>,
}

impl EdgeGrant {
    pub fn lo(&self) -> SystemTime {
        moment(self.lo_us)
    }

    pub fn hi(&self) -> SystemTime {
        moment(self.hi_us)
    }
}

fn moment(us: i64) -> SystemTime {
    if us >= 0 {
        UNIX_EPOCH + Duration::from_micros(us as u64)
    } else {
        UNIX_EPOCH - Duration::from_micros(us.unsigned_abs())
    }
}

/// The host name, and /etc/machine-id when it can be read (as the Python client names a
/// device).
pub fn default_device() -> String {
    let machine = std::fs::read_to_string("/etc/machine-id").unwrap_or_default();
    let machine: String = machine.trim().chars().take(32).collect();
    let host = hostname();
    if machine.is_empty() {
        host
    } else {
        format!("{host} (machine-id {machine})")
    }
}

fn hostname() -> String {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is writable for its whole length; gethostname writes at most that.
        if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0 {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            if end > 0 {
                return String::from_utf8_lossy(&buf[..end]).into_owned();
            }
        }
    }
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

fn sqlite(e: rusqlite::Error) -> Error {
    Error::Edge {
        message: format!("SQLite: {e}"),
    }
}

fn system_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

/// What an xid12 store uses for an id with no mark: the low 16 bits of the process id and a
/// random counter (as the Python client draws them).
fn system_seed() -> XidSeed {
    XidSeed {
        pid: std::process::id() as u16,
        counter: crate::xid::random_u32() & MAX_COUNTER,
    }
}

/// One row of `pg_idgen_edge`.
#[derive(Clone, Debug)]
struct Row {
    grant_id: i64,
    token: i64,
    slot: i64,
    lo_us: i64,
    hi_us: i64,
    epoch_ms: Option<i64>,
    writer: String,
    syncs: i64,
    last_id: Value,
    last_id_us: Option<i64>,
    cloned: Option<String>,
    attempt: Option<i64>,
}

impl Row {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
        Ok(Row {
            grant_id: r.get(0)?,
            token: r.get(1)?,
            slot: r.get(2)?,
            lo_us: r.get(3)?,
            hi_us: r.get(4)?,
            epoch_ms: r.get(5)?,
            writer: r.get(6)?,
            syncs: r.get(7)?,
            last_id: r.get(8)?,
            last_id_us: r.get(9)?,
            cloned: r.get(10)?,
            attempt: r.get(11)?,
        })
    }
}

/// A grant as `idgen_acquire` / `idgen_renew` return it, the window in unix µs as the file
/// keeps it.
struct ServerGrant {
    grant_id: i64,
    token: i64,
    slot: i64,
    epoch_ms: Option<i64>,
    lo_us: i64,
    hi_us: i64,
}

/// The columns of a grant row `ServerGrant::read` reads: the window in id-time (`lo_t`,
/// `hi_t`: the extension's 0.7.0), converted to unix µs here, not in SQL.
const GRANT_COLUMNS: &str = "grant_id, token, slot, epoch_ms, lo_t, hi_t";

impl ServerGrant {
    fn read(row: &postgres::Row, kind: Kind) -> Result<ServerGrant, Error> {
        let epoch_ms: Option<i64> = row.try_get(3).map_err(registry_error)?;
        let kind = edge_kind(kind, epoch_ms, "the registry's grant row")?;
        let lo_t: i64 = row.try_get(4).map_err(registry_error)?;
        let hi_t: i64 = row.try_get(5).map_err(registry_error)?;
        Ok(ServerGrant {
            grant_id: row.try_get(0).map_err(registry_error)?,
            token: row.try_get(1).map_err(registry_error)?,
            slot: row.try_get::<_, i32>(2).map_err(registry_error)?.into(),
            epoch_ms,
            lo_us: kind.id_time_to_unix_us(lo_t),
            hi_us: kind.id_time_to_unix_us(hi_t),
        })
    }
}

/// The core's kind of a grant of `kind` with this epoch (Snowflake needs one).
fn edge_kind(kind: Kind, epoch_ms: Option<i64>, what: &str) -> Result<EdgeKind, Error> {
    match (kind, epoch_ms) {
        (Kind::Xid12, _) => Ok(EdgeKind::Xid12),
        (Kind::Snowflake, Some(epoch_ms)) => Ok(EdgeKind::Snowflake { epoch_ms }),
        (Kind::Snowflake, None) => Err(Error::Edge {
            message: format!("the Snowflake grant in {what} has no epoch_ms"),
        }),
    }
}

/// The registry grant of one edge device, of one kind (xid12, recommended, or Snowflake), kept
/// in a SQLite database (table `pg_idgen_edge`, created if missing). See the module's text.
pub struct EdgeStore<'c> {
    db: &'c Connection,
    kind: Kind,
    device: String,
    /// Unix µs.
    clock: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// The pid and counter of an xid12 id made with no mark.
    seed: Arc<dyn Fn() -> XidSeed + Send + Sync>,
}

impl fmt::Debug for EdgeStore<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EdgeStore")
            .field("kind", &self.kind)
            .field("device", &self.device)
            .finish_non_exhaustive()
    }
}

impl<'c> EdgeStore<'c> {
    /// The store of `kind` in `db` (the table is created if missing). `device` names this
    /// device in the registry's reports and in messages (default: [`default_device`]).
    pub fn new(db: &'c Connection, kind: Kind, device: Option<&str>) -> Result<Self, Error> {
        db.execute_batch(TABLE_SQL).map_err(sqlite)?;
        Ok(EdgeStore {
            db,
            kind,
            device: device
                .filter(|d| !d.is_empty())
                .map_or_else(default_device, str::to_string),
            clock: Arc::new(system_us),
            seed: Arc::new(system_seed),
        })
    }

    /// Another clock, in unix milliseconds (as `Registry::clock`; tests step it).
    pub fn clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(move || clock().saturating_mul(1000));
        self
    }

    /// Another clock, in unix microseconds (the unit of the file's window).
    pub fn clock_us(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The pid and counter of an xid12 id made with no mark (tests; by default the process
    /// id's low 16 bits and a random counter).
    #[cfg(test)]
    fn xid_seed(mut self, seed: XidSeed) -> Self {
        self.seed = Arc::new(move || seed);
        self
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn device(&self) -> &str {
        &self.device
    }

    fn row(&self) -> Result<Option<Row>, Error> {
        self.db
            .query_row(
                &format!("SELECT {COLUMNS} FROM pg_idgen_edge WHERE kind = ?1"),
                [self.kind.sql()],
                Row::read,
            )
            .optional()
            .map_err(sqlite)
    }

    fn window(&self, r: &Row) -> EdgeWindow {
        EdgeWindow {
            grant_id: r.grant_id,
            kind: self.kind.sql(),
            slot: r.slot,
            lo_us: r.lo_us,
            hi_us: r.hi_us,
            device: self.device.clone(),
        }
    }

    fn no_grant(&self) -> Error {
        Error::Edge {
            message: words::edge_no_grant(self.kind.sql(), &self.device),
        }
    }

    /// The mark kept in the file, as this kind's id.
    fn mark(&self, r: &Row) -> Result<Option<EdgeId>, Error> {
        match (&r.last_id, self.kind) {
            (Value::Null, _) => Ok(None),
            (Value::Text(t), Kind::Xid12) => Ok(Some(EdgeId::Xid(Xid::parse(t)?))),
            (Value::Integer(id), Kind::Snowflake) => Ok(Some(EdgeId::Snowflake(*id))),
            (other, kind) => Err(Error::Edge {
                message: format!(
                    "the mark of grant {} in pg_idgen_edge is {other:?}, not {}",
                    r.grant_id,
                    match kind {
                        Kind::Xid12 => "an xid12's text",
                        Kind::Snowflake => "a Snowflake id (an integer)",
                    }
                ),
            }),
        }
    }

    /// The grant this store holds (`None` before `enrol` and after a releasing `sync`).
    pub fn grant(&self) -> Result<Option<EdgeGrant>, Error> {
        let Some(r) = self.row()? else {
            return Ok(None);
        };
        Ok(Some(EdgeGrant {
            grant_id: r.grant_id,
            kind: self.kind,
            slot: r.slot,
            lo_us: r.lo_us,
            hi_us: r.hi_us,
            epoch_ms: r.epoch_ms,
            last_id: self.mark(&r)?,
            writer: r.writer,
            syncs: r.syncs,
            last_id_us: r.last_id_us,
            cloned: r.cloned,
        }))
    }

    /// `enrol` and `sync` commit their writes to the file themselves.
    fn outside_sqlite_transaction(&self) -> Result<(), Error> {
        if self.db.is_autocommit() {
            Ok(())
        } else {
            Err(Error::Edge {
                message: words::EDGE_SQLITE_IN_TRANSACTION.into(),
            })
        }
    }

    /// Why `enrol` must not run now, if it must not: the file holds a live grant (one whose
    /// window has not ended on this clock, and not found cloned).
    fn check_enrol(&self) -> Result<(), Error> {
        self.outside_sqlite_transaction()?;
        match self.row()? {
            Some(r) if r.cloned.is_none() && (self.clock)() < r.hi_us => Err(Error::Edge {
                message: words::edge_already_enrolled(&self.window(&r).to_string()),
            }),
            _ => Ok(()),
        }
    }

    /// Acquires a grant of `pool` (normally `"edge"`) for `lease` (`idgen_acquire`, in one
    /// transaction on `client`) and keeps it in the SQLite file (committed). `writer` defaults
    /// to the device name. Refuses while the file holds a live grant (one whose window has not
    /// ended on this clock, and not found cloned), and while the SQLite connection is inside a
    /// transaction.
    pub fn enrol(
        &self,
        client: &mut postgres::Client,
        writer: Option<&str>,
        lease: Duration,
        pool: &str,
    ) -> Result<EdgeGrant, Error> {
        self.check_enrol()?;
        let writer = writer
            .filter(|w| !w.is_empty())
            .unwrap_or(&self.device)
            .to_string();
        let lease = lease_ms(lease)?;
        let kind = self.kind.sql();
        let g = self.server(client, |tx, schema| {
            let sql = format!(
                "SELECT {GRANT_COLUMNS} FROM {schema}.idgen_acquire($1::pg_catalog.text, \
                 $2::pg_catalog.text, {}, $4::pg_catalog.text)",
                times_unit(3, "1 millisecond")
            );
            let row = tx.query_typed_one(
                &sql,
                &[
                    (&kind, Type::TEXT),
                    (&writer, Type::TEXT),
                    (&lease, Type::INT8),
                    (&pool, Type::TEXT),
                ],
            )?;
            Ok(row)
        })?;
        let g = ServerGrant::read(&g, self.kind)?;
        self.keep(&g, &writer)?;
        self.grant()?.ok_or_else(|| self.no_grant())
    }

    /// Stores a new grant: the mark starts empty, the count at 0.
    fn keep(&self, g: &ServerGrant, writer: &str) -> Result<(), Error> {
        let tx = self.db.unchecked_transaction().map_err(sqlite)?;
        tx.execute(
            "DELETE FROM pg_idgen_edge WHERE kind = ?1",
            [self.kind.sql()],
        )
        .map_err(sqlite)?;
        tx.execute(
            "INSERT INTO pg_idgen_edge (kind, grant_id, token, slot, lo_us, hi_us, epoch_ms, writer) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                self.kind.sql(),
                g.grant_id,
                g.token,
                g.slot,
                g.lo_us,
                g.hi_us,
                g.epoch_ms,
                writer
            ],
        )
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)
    }

    /// The next id (an xid12, or a Snowflake id), of the grant's slot, inside its window,
    /// greater than the stored mark. The new mark is written on the SQLite connection,
    /// uncommitted: commit it with the row the id keys. Errors instead of making an id outside
    /// the window or from a copied state: [`Error::EdgeClockBeforeWindow`],
    /// [`Error::EdgeWindowEnded`] (also when the window's ids are used up),
    /// [`Error::EdgeCloned`], [`Error::Edge`] (no grant).
    ///
    /// The id is the core's ([`EdgeState::next`]): a clock that steps back inside the window
    /// continues above the mark (xid12 the mark's second with the next counter, the next second
    /// when the counter is used up; Snowflake the next sequence, then the next millisecond),
    /// never past the window's end.
    pub fn next_id(&self) -> Result<EdgeId, Error> {
        for _ in 0..MAX_TRIES {
            let r = self.row()?.ok_or_else(|| self.no_grant())?;
            let state = self.state(&r)?;
            let now_us = (self.clock)();
            // The rule is the core's (docs/formats.md §10): this store reads and writes the row.
            let made = match state.next(now_us, (self.seed)()) {
                Ok(made) => made,
                Err(e) => return Err(self.refusal(e, &r, now_us)),
            };
            let (id, stored) = match made.id {
                CoreId::Xid(x) => {
                    let x = Xid::from_bytes(x.0);
                    (EdgeId::Xid(x), Value::Text(x.to_string()))
                }
                CoreId::Snowflake(n) => (EdgeId::Snowflake(n), Value::Integer(n)),
            };
            // Compare-and-set: another connection to the file that moved the mark or shrank the
            // window (a release) in between makes this one read it again (or wait for its
            // lock), never reuse a mark or make an id past a window's new end.
            let changed = self
                .db
                .execute(
                    "UPDATE pg_idgen_edge SET last_id = ?1, last_id_us = ?2 \
                     WHERE kind = ?3 AND grant_id = ?4 AND last_id IS ?5 AND hi_us = ?6",
                    params![
                        stored,
                        made.id_time_us,
                        self.kind.sql(),
                        r.grant_id,
                        r.last_id,
                        r.hi_us
                    ],
                )
                .map_err(sqlite)?;
            if changed == 1 {
                return Ok(id);
            }
        }
        Err(Error::Edge {
            message: format!(
                "the mark of the {} grant moved {MAX_TRIES} times while this store read it: another connection keeps making ids from this file",
                self.kind.sql()
            ),
        })
    }

    /// Before the server frees the id-time after the last id, this file stops using it: the
    /// window's end becomes the core's release end (committed).
    /// The end is set only if the mark is still the one it was computed from (another
    /// connection that made an id in between makes this one read the row again); the row
    /// returned is the one the release reports.
    fn end_for_release(&self, mut r: Row) -> Result<Row, Error> {
        for _ in 0..MAX_TRIES {
            let end = self.state(&r)?.release_end();
            let changed = self
                .db
                .execute(
                    "UPDATE pg_idgen_edge SET hi_us = min(hi_us, ?1) \
                     WHERE kind = ?2 AND grant_id = ?3 AND last_id IS ?4",
                    params![end, self.kind.sql(), r.grant_id, r.last_id],
                )
                .map_err(sqlite)?;
            if changed == 1 {
                return Ok(r);
            }
            r = self.row()?.ok_or_else(|| self.no_grant())?;
        }
        Err(Error::Edge {
            message: format!(
                "the mark of the {} grant moved {MAX_TRIES} times while this store released it: another connection keeps making ids from this file",
                self.kind.sql()
            ),
        })
    }

    /// The row as the core's rule reads it.
    fn state(&self, r: &Row) -> Result<EdgeState, Error> {
        let what = format!("grant {} of pg_idgen_edge", r.grant_id);
        Ok(EdgeState {
            kind: edge_kind(self.kind, r.epoch_ms, &what)?,
            slot: r.slot,
            lo_us: r.lo_us,
            hi_us: r.hi_us,
            last_id: self.mark(r)?.map(|m| match m {
                EdgeId::Xid(x) => CoreId::Xid(idgen_core::xid::Xid(*x.as_bytes())),
                EdgeId::Snowflake(n) => CoreId::Snowflake(n),
            }),
            last_id_us: r.last_id_us,
            cloned: r.cloned.is_some(),
        })
    }

    /// The error for the core's refusal (or a row no grant has) at clock reading `now_us`.
    fn refusal(&self, e: EdgeError, r: &Row, now_us: i64) -> Error {
        let clock_ms = now_us.div_euclid(1000);
        match e {
            EdgeError::Refused(EdgeRefusal::Cloned) => Error::EdgeCloned {
                message: words::edge_cloned(r.cloned.as_deref().unwrap_or_default()),
                detail: None,
                hint: None,
            },
            EdgeError::Refused(EdgeRefusal::ClockBeforeWindow) => Error::EdgeClockBeforeWindow {
                clock_ms,
                grant: self.window(r),
            },
            EdgeError::Refused(refusal @ (EdgeRefusal::WindowEnded | EdgeRefusal::UsedUp)) => {
                Error::EdgeWindowEnded {
                    clock_ms,
                    grant: self.window(r),
                    used_up: refusal == EdgeRefusal::UsedUp,
                    last_id_us: r.last_id_us,
                }
            }
            EdgeError::Invalid(g) => Error::from(g),
            EdgeError::MarkOfOtherKind => Error::Edge {
                message: format!(
                    "the mark of grant {} in pg_idgen_edge is not a {} id",
                    r.grant_id,
                    self.kind.sql()
                ),
            },
        }
    }

    /// Back online: reports to the registry (`idgen_report`: this device, its count and its
    /// last id's time), then renews the grant for `renew` from the server's clock, or with
    /// `None` releases it (`idgen_release`: the id-time after the last id is freed) and forgets
    /// it. Both in one server transaction on `client`; then the count and the window are
    /// committed to SQLite (the SQLite connection must not be inside a transaction). Returns
    /// the grant held after it (`None` after a release).
    ///
    /// [`Error::EdgeCloned`] (SQLSTATE 23505, with the server's message, DETAIL and HINT) when
    /// the registry shows this state continued on another device: the file is marked, and the
    /// store makes no more ids of this grant. Other server errors are [`Error::Registry`].
    pub fn sync(
        &self,
        client: &mut postgres::Client,
        renew: Option<Duration>,
    ) -> Result<Option<EdgeGrant>, Error> {
        self.outside_sqlite_transaction()?;
        let r = self.row()?.ok_or_else(|| Error::Edge {
            message: words::edge_no_grant_to_sync(self.kind.sql(), &self.device),
        })?;
        let renew_ms = renew.map(lease_ms).transpose()?;
        // This report's number, kept in the file until its reply arrives: when the reply is
        // lost, the next sync sends the same report again, and the registry answers it as before.
        let attempt = match r.attempt {
            Some(a) => a,
            None => {
                let a = attempt_number();
                self.db
                    .execute(
                        "UPDATE pg_idgen_edge SET attempt = ?1 WHERE kind = ?2",
                        params![a, self.kind.sql()],
                    )
                    .map_err(sqlite)?;
                a
            }
        };
        let r = if renew_ms.is_none() {
            self.end_for_release(r)?
        } else {
            r
        };
        // The last id's moment, sent as a timestamptz (the driver's SystemTime).
        let last_time = r.last_id_us.map(moment);
        let (count, hi_us) = self.server(client, |tx, schema| {
            let count: i64 = tx
                .query_typed_one(
                    &format!(
                        "SELECT {schema}.idgen_report($1::pg_catalog.int8, $2::pg_catalog.int8, \
                         $3::pg_catalog.text, $4::pg_catalog.int8, $5::pg_catalog.timestamptz, \
                         $6::pg_catalog.int8)"
                    ),
                    &[
                        (&r.grant_id, Type::INT8),
                        (&r.token, Type::INT8),
                        (&self.device, Type::TEXT),
                        (&r.syncs, Type::INT8),
                        (&last_time, Type::TIMESTAMPTZ),
                        (&attempt, Type::INT8),
                    ],
                )?
                .get(0);
            let Some(renew_ms) = renew_ms else {
                tx.query_typed_one(
                    &format!(
                        "SELECT 1 FROM {schema}.idgen_release($1::pg_catalog.int8, \
                         $2::pg_catalog.int8, {})",
                        moment_or_never(3)
                    ),
                    &[
                        (&r.grant_id, Type::INT8),
                        (&r.token, Type::INT8),
                        (&last_time, Type::TIMESTAMPTZ),
                    ],
                )?;
                return Ok((count, None));
            };
            let row = tx.query_typed_one(
                &format!(
                    "SELECT {GRANT_COLUMNS} FROM {schema}.idgen_renew($1::pg_catalog.int8, \
                     $2::pg_catalog.int8, {})",
                    times_unit(3, "1 millisecond")
                ),
                &[
                    (&r.grant_id, Type::INT8),
                    (&r.token, Type::INT8),
                    (&renew_ms, Type::INT8),
                ],
            )?;
            Ok((count, Some(row)))
        })?;
        let hi_us = hi_us
            .map(|row| ServerGrant::read(&row, self.kind).map(|g| g.hi_us))
            .transpose()?;
        let tx = self.db.unchecked_transaction().map_err(sqlite)?;
        match hi_us {
            None => tx.execute(
                "DELETE FROM pg_idgen_edge WHERE kind = ?1",
                [self.kind.sql()],
            ),
            Some(hi_us) => tx.execute(
                "UPDATE pg_idgen_edge SET syncs = ?1, hi_us = ?2, attempt = NULL WHERE kind = ?3",
                params![count, hi_us, self.kind.sql()],
            ),
        }
        .map_err(sqlite)?;
        tx.commit().map_err(sqlite)?;
        self.grant()
    }

    /// Runs `run(transaction, schema)` in one server transaction, committed; server errors as
    /// the registry's, 23505 as [`Error::EdgeCloned`] (remembered in the file, so no more ids
    /// are made).
    fn server<T>(
        &self,
        client: &mut postgres::Client,
        run: impl FnOnce(&mut postgres::Transaction<'_>, &str) -> Result<T, postgres::Error>,
    ) -> Result<T, Error> {
        let result = (|| -> Result<Option<T>, postgres::Error> {
            let mut tx = client.transaction()?;
            let Some(schema) = tx.query_typed_opt(SCHEMA_SQL, &[])? else {
                return Ok(None);
            };
            let schema = quote_schema(schema.get(SCHEMA_COLUMN));
            let value = run(&mut tx, &schema)?;
            tx.commit()?;
            Ok(Some(value))
        })();
        match result {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(not_installed()),
            Err(e) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
                let db = e.as_db_error();
                let message = db.map_or_else(|| e.to_string(), |d| d.message().to_string());
                let detail = db.and_then(|d| d.detail()).map(str::to_string);
                let hint = db.and_then(|d| d.hint()).map(str::to_string);
                // Kept as the Python client keeps it: the message, then the DETAIL.
                let kept = words::edge_kept(&message, detail.as_deref());
                self.db
                    .execute(
                        "UPDATE pg_idgen_edge SET cloned = ?1 WHERE kind = ?2",
                        params![kept, self.kind.sql()],
                    )
                    .map_err(sqlite)?;
                Err(Error::EdgeCloned {
                    message,
                    detail,
                    hint,
                })
            }
            Err(e) => Err(registry_error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

    const S: i64 = 1_800_000_000; // a unix second
    const DAY_US: i64 = 86_400_000_000;
    const EPOCH: i64 = idgen_core::snowflake::DEFAULT_EPOCH_MS;

    /// tests/vectors/edge_store.json: the table, its columns and the enrolment row, stated once
    /// for both clients (the Python client's tests compare its statements with the same file).
    struct Shared {
        table: String,
        columns: String,
        enrol: String,
    }

    fn shared() -> Shared {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/vectors/edge_store.json"
        );
        let text = std::fs::read_to_string(path).expect("tests/vectors/edge_store.json");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let columns: Vec<&str> = v["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        Shared {
            table: v["table"].as_str().unwrap().to_string(),
            columns: columns.join(", "),
            enrol: v["enrol"].as_str().unwrap().to_string(),
        }
    }

    /// A clock the test moves (unix ms).
    #[derive(Clone)]
    struct Clock(Arc<AtomicI64>);

    impl Clock {
        fn at(ms: i64) -> Clock {
            Clock(Arc::new(AtomicI64::new(ms)))
        }
        fn set(&self, ms: i64) {
            self.0.store(ms, Ordering::SeqCst);
        }
        fn f(&self) -> impl Fn() -> i64 + Send + Sync + 'static {
            let c = self.0.clone();
            move || c.load(Ordering::SeqCst)
        }
    }

    fn store<'c>(db: &'c Connection, kind: Kind, clock: &Clock) -> EdgeStore<'c> {
        EdgeStore::new(db, kind, Some("test-device"))
            .unwrap()
            .clock(clock.f())
    }

    /// A grant as `enrol` keeps it, without a server.
    fn grant(db: &Connection, kind: Kind, slot: i64, lo_us: i64, hi_us: i64) {
        let epoch = (kind == Kind::Snowflake).then_some(EPOCH);
        db.execute("DELETE FROM pg_idgen_edge WHERE kind = ?1", [kind.sql()])
            .unwrap();
        db.execute(
            &shared().enrol,
            params![kind.sql(), 7, 12345, slot, lo_us, hi_us, epoch, "w"],
        )
        .unwrap();
    }

    fn temp_path(name: &str) -> std::path::PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!(
            "pg_idgen_edge_{}_{n}_{name}.db",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&p);
        p
    }

    fn commit_one(db: &Connection, store: &EdgeStore<'_>) -> EdgeId {
        let tx = db.unchecked_transaction().unwrap();
        let id = store.next_id().unwrap();
        tx.commit().unwrap();
        id
    }

    #[test]
    fn xid_ids_inside_the_window_above_the_mark() {
        let db = Connection::open_in_memory().unwrap();
        let clock = Clock::at(S * 1000 + 500);
        let s = store(&db, Kind::Xid12, &clock);
        grant(
            &db,
            Kind::Xid12,
            0xc0_0001,
            S * 1_000_000,
            (S + 10) * 1_000_000,
        );
        let mut last = None;
        for i in 0..50 {
            clock.set(S * 1000 + i * 100);
            let id = s.next_id().unwrap().xid().unwrap();
            assert_eq!(id.machine(), [0xc0, 0x00, 0x01]);
            assert_eq!(i64::from(id.unix_seconds()), S + i / 10);
            assert!(Some(id) > last);
            last = Some(id);
        }
        let g = s.grant().unwrap().unwrap();
        assert_eq!(g.last_id, last.map(EdgeId::Xid));
        assert_eq!(g.last_id_us, Some((S + 4) * 1_000_000));
        let (kind, text): (String, String) = db
            .query_row(
                "SELECT typeof(last_id), last_id FROM pg_idgen_edge WHERE kind = 'xid12'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(kind, "text");
        assert_eq!(text, last.unwrap().to_string());
        assert_eq!(text.len(), 20);
    }

    #[test]
    fn snowflake_ids_inside_the_window_above_the_mark() {
        let db = Connection::open_in_memory().unwrap();
        let now = S * 1000;
        let clock = Clock::at(now);
        let s = store(&db, Kind::Snowflake, &clock);
        grant(&db, Kind::Snowflake, 800, now * 1000, (now + 1000) * 1000);
        let a = s.next_id().unwrap().snowflake().unwrap();
        let b = s.next_id().unwrap().snowflake().unwrap();
        assert_eq!(b, a + 1);
        assert_eq!(idgen_core::snowflake::worker(a), Ok(800));
        assert_eq!(idgen_core::snowflake::unix_ms(a, EPOCH), Ok(now));
        let (kind, v, us): (String, i64, i64) = db
            .query_row(
                "SELECT typeof(last_id), last_id, last_id_us FROM pg_idgen_edge",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!((kind.as_str(), v, us), ("integer", b, now * 1000));
        // Used up: the window's last millisecond, 4096 ids.
        grant(&db, Kind::Snowflake, 800, now * 1000, (now + 1) * 1000);
        for _ in 0..4096 {
            s.next_id().unwrap();
        }
        let e = s.next_id().unwrap_err();
        assert!(
            matches!(e, Error::EdgeWindowEnded { used_up: true, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("are used up"), "{e}");
    }

    #[test]
    fn persists_across_reopening_and_a_crash_before_commit_loses_nothing_committed() {
        for kind in [Kind::Xid12, Kind::Snowflake] {
            let path = temp_path(kind.sql());
            let clock = Clock::at(S * 1000);
            let committed;
            {
                let db = Connection::open(&path).unwrap();
                db.execute_batch("CREATE TABLE notes (id text PRIMARY KEY)")
                    .unwrap();
                let s = store(&db, kind, &clock);
                grant(&db, kind, 900, S * 1_000_000, S * 1_000_000 + DAY_US);
                for _ in 0..3 {
                    let tx = db.unchecked_transaction().unwrap();
                    let id = s.next_id().unwrap();
                    tx.execute("INSERT INTO notes VALUES (?1)", [id.to_string()])
                        .unwrap();
                    tx.commit().unwrap();
                }
                committed = s.grant().unwrap().unwrap().last_id.unwrap();
                // A crash before the commit: the id, its row and its mark are lost together.
                let tx = db.unchecked_transaction().unwrap();
                let lost = s.next_id().unwrap();
                assert!(lost > committed);
                tx.execute("INSERT INTO notes VALUES (?1)", [lost.to_string()])
                    .unwrap();
                drop(tx); // rolled back
            }
            let db = Connection::open(&path).unwrap();
            let s = store(&db, kind, &clock);
            let g = s.grant().unwrap().unwrap();
            assert_eq!(g.last_id, Some(committed));
            let n: i64 = db
                .query_row("SELECT count(*) FROM notes", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 3);
            // The same clock reading after the restart: still above every committed id.
            let next = commit_one(&db, &s);
            assert!(next > committed, "{next} after {committed}");
            drop(s);
            drop(db);
            let _ = std::fs::remove_file(&path);
        }
    }

    #[test]
    fn refusals_name_the_clock_and_the_window() {
        let db = Connection::open_in_memory().unwrap();
        let clock = Clock::at(S * 1000);
        let s = store(&db, Kind::Xid12, &clock);
        let e = s.next_id().unwrap_err();
        assert!(matches!(e, Error::Edge { .. }), "{e}");
        assert!(e.to_string().contains("holds no xid12 grant"), "{e}");
        assert!(e.to_string().contains("test-device"), "{e}");

        grant(&db, Kind::Xid12, 1, S * 1_000_000, (S + 60) * 1_000_000);
        // An RTC reset to 2000.
        clock.set(946_684_800_000);
        let e = s.next_id().unwrap_err();
        assert!(matches!(e, Error::EdgeClockBeforeWindow { .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains("2000-01-01 00:00:00.000 UTC"), "{text}");
        assert!(text.contains("2027-01-15 08:00:00.000 UTC"), "{text}");
        assert!(text.contains("2027-01-15 08:01:00.000 UTC"), "{text}");
        assert!(text.contains("before the window of grant 7"), "{text}");
        // At the window's end.
        clock.set((S + 60) * 1000);
        let e = s.next_id().unwrap_err();
        assert!(
            matches!(
                e,
                Error::EdgeWindowEnded {
                    used_up: false,
                    clock_ms,
                    ..
                } if clock_ms == (S + 60) * 1000
            ),
            "{e}"
        );
        assert!(e.to_string().contains("at or after the end"), "{e}");
        // Nothing was written.
        assert_eq!(s.grant().unwrap().unwrap().last_id, None);

        // Cloned: no id, the kept message.
        clock.set(S * 1000);
        db.execute(
            "UPDATE pg_idgen_edge SET cloned = 'grant 7 is used by two devices (DETAIL: x)'",
            [],
        )
        .unwrap();
        let e = s.next_id().unwrap_err();
        assert!(matches!(e, Error::EdgeCloned { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("no id is made: grant 7 is used by two devices"),
            "{e}"
        );
        // A cloned grant does not stop a new enrolment.
        s.check_enrol().unwrap();
        db.execute("UPDATE pg_idgen_edge SET cloned = NULL", [])
            .unwrap();
        // A live grant does.
        let e = s.check_enrol().unwrap_err();
        assert!(e.to_string().contains("already holds grant 7"), "{e}");
        // An ended one does not.
        clock.set((S + 61) * 1000);
        s.check_enrol().unwrap();
        // Inside a SQLite transaction, enrol and sync refuse.
        let tx = db.unchecked_transaction().unwrap();
        let e = s.check_enrol().unwrap_err();
        assert!(e.to_string().contains("inside a transaction"), "{e}");
        drop(tx);
    }

    #[test]
    fn clock_stepping_back_inside_the_window_continues_above_the_mark() {
        let db = Connection::open_in_memory().unwrap();
        let clock = Clock::at((S + 30) * 1000);
        let s = store(&db, Kind::Xid12, &clock);
        grant(&db, Kind::Xid12, 5, S * 1_000_000, (S + 60) * 1_000_000);
        let a = s.next_id().unwrap().xid().unwrap();
        clock.set((S + 10) * 1000);
        let b = s.next_id().unwrap().xid().unwrap();
        assert!(b > a);
        assert_eq!(b.unix_seconds(), a.unix_seconds());
        assert_eq!(b.counter(), (a.counter() + 1) & MAX_COUNTER);
        assert_eq!(b.pid(), a.pid());
        // A used-up counter borrows the next second, up to the window's end.
        db.execute(
            "UPDATE pg_idgen_edge SET last_id = ?1",
            [
                Xid::from_parts(moment((S + 59) * 1_000_000), [0, 0, 5], 1, MAX_COUNTER)
                    .unwrap()
                    .to_string(),
            ],
        )
        .unwrap();
        let e = s.next_id().unwrap_err();
        assert!(matches!(e, Error::EdgeWindowEnded { used_up: true, .. }));
        db.execute(
            "UPDATE pg_idgen_edge SET last_id = ?1",
            [
                Xid::from_parts(moment((S + 40) * 1_000_000), [0, 0, 5], 1, MAX_COUNTER)
                    .unwrap()
                    .to_string(),
            ],
        )
        .unwrap();
        let c = s.next_id().unwrap().xid().unwrap();
        assert_eq!(i64::from(c.unix_seconds()), S + 41);
        assert_eq!(c.counter(), 0);

        // Snowflake: the next sequence, then the next millisecond (never a wait).
        let now = S * 1000;
        let clock = Clock::at(now + 500);
        let s = store(&db, Kind::Snowflake, &clock);
        grant(&db, Kind::Snowflake, 1000, now * 1000, (now + 1000) * 1000);
        let a = s.next_id().unwrap().snowflake().unwrap();
        clock.set(now + 100);
        let b = s.next_id().unwrap().snowflake().unwrap();
        assert_eq!(b, a + 1);
        // The last id of worker 1000 in millisecond now + 500: its sequence used up.
        let mark = (now + 500 - EPOCH) << 22 | 1000 << 12 | 4095;
        db.execute(
            "UPDATE pg_idgen_edge SET last_id = ?1 WHERE kind = 'snowflake'",
            [mark],
        )
        .unwrap();
        let c = s.next_id().unwrap().snowflake().unwrap();
        assert_eq!(idgen_core::snowflake::unix_ms(c, EPOCH), Ok(now + 501));
        assert_eq!(idgen_core::snowflake::sequence(c), Ok(0));
        let us: i64 = db
            .query_row(
                "SELECT last_id_us FROM pg_idgen_edge WHERE kind = 'snowflake'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(us, (now + 501) * 1000);
    }

    #[test]
    fn the_mark_is_compare_and_set() {
        // Two stores (two connections) on one file never make the same id.
        let path = temp_path("cas");
        let clock = Clock::at(S * 1000);
        let a_db = Connection::open(&path).unwrap();
        let b_db = Connection::open(&path).unwrap();
        let a = store(&a_db, Kind::Xid12, &clock);
        let b = store(&b_db, Kind::Xid12, &clock);
        grant(&a_db, Kind::Xid12, 3, S * 1_000_000, (S + 60) * 1_000_000);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..20 {
            assert!(seen.insert(a.next_id().unwrap()));
            assert!(seen.insert(b.next_id().unwrap()));
        }
        drop((a, b));
        drop((a_db, b_db));
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn the_file_layout_is_the_shared_one() {
        // Both statements create the same table.
        let info = |db: &Connection| -> Vec<(String, String, bool, Option<String>, i64)> {
            let mut st = db.prepare("PRAGMA table_info(pg_idgen_edge)").unwrap();
            st.query_map([], |r| {
                Ok((r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect()
        };
        let shared = shared();
        assert_eq!(TABLE_SQL, shared.table, "the table is edge_store.json's");
        assert_eq!(COLUMNS, shared.columns, "the columns are edge_store.json's");
        // A file made with the shared statement (as the Python client makes it) has this
        // client's table.
        let py = Connection::open_in_memory().unwrap();
        py.execute_batch(&shared.table).unwrap();
        let rs = Connection::open_in_memory().unwrap();
        EdgeStore::new(&rs, Kind::Xid12, Some("d")).unwrap();
        assert_eq!(info(&py), info(&rs));
        let names: Vec<String> = info(&rs).into_iter().map(|c| c.0).collect();
        assert_eq!(
            names.join(", "),
            format!("kind, {}", shared.columns),
            "columns and their order"
        );

        // A file Python wrote (its table, its insert, its marks) reads here, and continues.
        let clock = Clock::at(S * 1000);
        py.execute(
            &shared.enrol,
            params![
                "xid12",
                11,
                99,
                0xc0_0002,
                S * 1_000_000,
                (S + 60) * 1_000_000,
                None::<i64>,
                "py"
            ],
        )
        .unwrap();
        let mark = Xid::from_parts(moment(S * 1_000_000), [0xc0, 0, 2], 42, 1000).unwrap();
        py.execute(
            "UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ? WHERE kind = ?",
            params![mark.to_string(), S * 1_000_000, "xid12"],
        )
        .unwrap();
        let s = store(&py, Kind::Xid12, &clock);
        let g = s.grant().unwrap().unwrap();
        assert_eq!(
            (g.grant_id, g.slot, g.writer.as_str(), g.syncs, g.epoch_ms),
            (11, 0xc0_0002, "py", 0, None)
        );
        assert_eq!(g.last_id, Some(EdgeId::Xid(mark)));
        let next = s.next_id().unwrap().xid().unwrap();
        assert_eq!((next.pid(), next.counter()), (42, 1001));

        // And a file written here reads with Python's SELECT, as Python expects its values.
        let rs_clock = Clock::at(S * 1000 + 2);
        let s = store(&rs, Kind::Snowflake, &rs_clock);
        grant(
            &rs,
            Kind::Snowflake,
            768,
            S * 1_000_000,
            (S + 60) * 1_000_000,
        );
        let id = s.next_id().unwrap().snowflake().unwrap();
        let row: Vec<String> = rs
            .query_row(
                &format!(
                    "SELECT {} FROM pg_idgen_edge WHERE kind = ?",
                    shared
                        .columns
                        .split(", ")
                        .map(|c| format!("typeof({c})"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                ["snowflake"],
                |r| (0..11).map(|i| r.get(i)).collect(),
            )
            .unwrap();
        assert_eq!(
            row,
            [
                "integer", "integer", "integer", "integer", "integer", "integer", "text",
                "integer", "integer", "integer", "null"
            ]
        );
        let (last, last_us): (i64, i64) = rs
            .query_row(
                "SELECT last_id, last_id_us FROM pg_idgen_edge WHERE kind = 'snowflake'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((last, last_us), (id, (S * 1000 + 2) * 1000));
    }

    #[test]
    fn a_release_never_ends_the_window_below_an_id_made_meanwhile() {
        // Another connection to the file makes an id after this one read the row for a
        // release: the end is computed again from the new mark, never below the new id.
        let db = Connection::open_in_memory().unwrap();
        let clock = Clock::at(S * 1000);
        let s = store(&db, Kind::Snowflake, &clock);
        grant(
            &db,
            Kind::Snowflake,
            800,
            S * 1_000_000,
            (S + 60) * 1_000_000,
        );
        commit_one(&db, &s);
        let stale = s.row().unwrap().unwrap();
        clock.set(S * 1000 + 5_000);
        commit_one(&db, &s);
        let released = s.end_for_release(stale).unwrap();
        let g = s.grant().unwrap().unwrap();
        assert_eq!(released.last_id_us, Some((S * 1000 + 5_000) * 1000));
        assert_eq!(g.hi_us, (S * 1000 + 5_001) * 1000);
    }

    #[test]
    fn system_clock_and_default_device() {
        let db = Connection::open_in_memory().unwrap();
        let s = EdgeStore::new(&db, Kind::Xid12, None).unwrap();
        assert!(!s.device().is_empty());
        assert_eq!(s.device(), default_device());
        let now_us = system_us();
        grant(
            &db,
            Kind::Xid12,
            9,
            now_us - 60_000_000,
            now_us + 3_600_000_000,
        );
        let a = s.next_id().unwrap();
        let b = s.next_id().unwrap();
        assert!(b > a);
    }

    #[test]
    fn a_mark_of_the_wrong_type_is_an_error_not_a_guess() {
        let db = Connection::open_in_memory().unwrap();
        let clock = Clock::at(S * 1000);
        let s = store(&db, Kind::Snowflake, &clock);
        grant(
            &db,
            Kind::Snowflake,
            800,
            S * 1_000_000,
            (S + 1) * 1_000_000,
        );
        db.execute("UPDATE pg_idgen_edge SET last_id = 'abc'", [])
            .unwrap();
        let e = s.next_id().unwrap_err();
        assert!(e.to_string().contains("not a Snowflake id"), "{e}");
    }

    /// tests/vectors/edge_traces.json through this store: the row written as the file keeps it,
    /// the clock and the xid12 seed injected, each id and refusal as the file says.
    #[test]
    fn the_shared_edge_traces() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/vectors/edge_traces.json"
        );
        let text = std::fs::read_to_string(path).expect("tests/vectors/edge_traces.json");
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let unhex = |h: &str| -> Xid {
            let bytes: Vec<u8> = (0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                .collect();
            Xid::try_from(bytes.as_slice()).unwrap()
        };
        let hex = |x: Xid| -> String { x.as_bytes().iter().map(|b| format!("{b:02x}")).collect() };
        let mut steps_run = 0;
        for case in doc["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let kind = match case["kind"].as_str().unwrap() {
                "xid12" => Kind::Xid12,
                _ => Kind::Snowflake,
            };
            let st = &case["state"];
            let db = Connection::open_in_memory().unwrap();
            let now = Arc::new(AtomicI64::new(0));
            let clock = now.clone();
            let mut s = EdgeStore::new(&db, kind, Some("vectors"))
                .unwrap()
                .clock_us(move || clock.load(Ordering::SeqCst));
            if kind == Kind::Xid12 {
                s = s.xid_seed(XidSeed {
                    pid: case["pid"].as_u64().unwrap() as u16,
                    counter: case["counter"].as_u64().unwrap() as u32,
                });
            }
            db.execute(
                &shared().enrol,
                params![
                    kind.sql(),
                    7,
                    99,
                    st["slot"].as_i64(),
                    st["lo_us"].as_i64(),
                    st["hi_us"].as_i64(),
                    st["epoch_ms"].as_i64(),
                    "w"
                ],
            )
            .unwrap();
            let last: Value = match &st["last_id"] {
                serde_json::Value::String(h) => Value::Text(unhex(h).to_string()),
                serde_json::Value::Number(n) => Value::Integer(n.as_i64().unwrap()),
                _ => Value::Null,
            };
            db.execute(
                "UPDATE pg_idgen_edge SET last_id = ?1, last_id_us = ?2, cloned = ?3",
                params![last, st["last_id_us"].as_i64(), st["cloned"].as_str()],
            )
            .unwrap();
            for (n, step) in case["steps"].as_array().unwrap().iter().enumerate() {
                steps_run += 1;
                let expect = &step["expect"];
                if let Some(h) = step["renew"]["hi_us"].as_i64() {
                    db.execute("UPDATE pg_idgen_edge SET hi_us = ?1", [h])
                        .unwrap();
                    continue;
                }
                let before = s.grant().unwrap().unwrap();
                if step["release"] == true {
                    s.end_for_release(s.row().unwrap().unwrap()).unwrap();
                    let g = s.grant().unwrap().unwrap();
                    assert_eq!(Some(g.hi_us), expect["hi_us"].as_i64(), "{name}, step {n}");
                    continue;
                }
                now.store(step["now_us"].as_i64().unwrap(), Ordering::SeqCst);
                match (s.next_id(), expect["refused"].as_str()) {
                    (Ok(id), None) => {
                        let got = match id {
                            EdgeId::Xid(x) => serde_json::Value::from(hex(x)),
                            EdgeId::Snowflake(v) => serde_json::Value::from(v),
                        };
                        assert_eq!(got, expect["id"], "{name}, step {n}");
                        let g = s.grant().unwrap().unwrap();
                        assert_eq!(g.last_id, Some(id), "{name}, step {n}: the mark");
                        assert_eq!(
                            g.last_id_us,
                            expect["last_id_us"].as_i64(),
                            "{name}, step {n}"
                        );
                        assert!(
                            before.last_id < Some(id),
                            "{name}, step {n}: above the mark"
                        );
                    }
                    (Err(e), Some(want)) => {
                        let got = match e {
                            Error::EdgeCloned { .. } => "cloned",
                            Error::EdgeClockBeforeWindow { .. } => "clock_before_window",
                            Error::EdgeWindowEnded { used_up: false, .. } => "window_ended",
                            Error::EdgeWindowEnded { used_up: true, .. } => "used_up",
                            other => panic!("{name}, step {n}: {other}"),
                        };
                        assert_eq!(got, want, "{name}, step {n}");
                        assert_eq!(
                            s.grant().unwrap().unwrap(),
                            before,
                            "{name}, step {n}: unchanged"
                        );
                    }
                    (got, want) => panic!("{name}, step {n}: got {got:?}, want {want:?}"),
                }
            }
        }
        assert!(steps_run >= 70, "{steps_run} steps");
    }
}
