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
    acquire_sql, grant_row, lease_ms, not_installed, quote_schema, registry_error, release_sql,
    renew_sql, report_sql, GrantRow, SCHEMA_COLUMN, SCHEMA_SQL,
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

impl ServerGrant {
    /// The grant row (the protocol's, the window in id-time) with the window converted to
    /// unix µs here, not in SQL.
    fn read(row: &postgres::Row, kind: Kind) -> Result<ServerGrant, Error> {
        let g: GrantRow = grant_row(row).map_err(registry_error)?;
        let kind = edge_kind(kind, g.epoch_ms, "the registry's grant row")?;
        Ok(ServerGrant {
            grant_id: g.grant_id,
            token: g.token,
            slot: g.slot,
            epoch_ms: g.epoch_ms,
            lo_us: kind.id_time_to_unix_us(g.lo_t),
            hi_us: kind.id_time_to_unix_us(g.hi_t),
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
            let row = tx.query_typed_one(
                &acquire_sql(schema),
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
                    &report_sql(schema),
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
                    &release_sql(schema),
                    &[
                        (&r.grant_id, Type::INT8),
                        (&r.token, Type::INT8),
                        (&last_time, Type::TIMESTAMPTZ),
                    ],
                )?;
                return Ok((count, None));
            };
            let row = tx.query_typed_one(
                &renew_sql(schema),
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
#[path = "edge_tests.rs"]
mod tests;
