//! `Xid`: the value of a PostgreSQL `xid12`, and the rs/xid generator of this process.

use crate::Error;
use idgen_core::xid::{self as core, Generator, LocalCounter, LEN, TEXT_LEN};
use std::fmt;
use std::str::FromStr;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A 12-byte rs/xid id, the value of a PostgreSQL `xid12`.
///
/// Bytes, big-endian: 0–3 unix seconds, 4–6 machine id, 7–8 process id, 9–11 counter. Ids
/// order as their bytes do, which is the server's order and creation-second order. The text
/// form is 20 lowercase base32hex characters; parsing accepts upper case too, nothing else.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Xid(core::Xid);

impl Xid {
    /// The id of these 12 bytes (every 12 bytes are an id).
    pub const fn from_bytes(bytes: [u8; LEN]) -> Xid {
        Xid(core::Xid(bytes))
    }

    /// The 12 bytes, as the server stores and sends them.
    pub const fn as_bytes(&self) -> &[u8; LEN] {
        &self.0 .0
    }

    /// Parses the 20-character text, exactly as the server's `xid12` input does.
    pub fn parse(text: &str) -> Result<Xid, Error> {
        core::Xid::parse(text.as_bytes())
            .map(Xid)
            .map_err(|reason| Error::XidText {
                text: text.to_string(),
                reason,
            })
    }

    /// The id of these parts; the time is cut down to its second (as the server's
    /// `xid12_from_parts`), and must lie within 1970-01-01 .. 2106-02-07 06:28:15 UTC.
    pub fn from_parts(
        time: SystemTime,
        machine: [u8; 3],
        pid: u16,
        counter: u32,
    ) -> Result<Xid, Error> {
        let seconds = core::time_field(unix_seconds(time))?;
        Ok(Xid(core::Xid::from_parts(seconds, machine, pid, counter)?))
    }

    /// The smallest id of the second `time` falls in, like the server's `xid12_min`: the lower
    /// bound of a time-range scan on an xid12 index.
    pub fn min_for(time: SystemTime) -> Result<Xid, Error> {
        Ok(Xid(core::Xid::min_at(core::time_field(unix_seconds(
            time,
        ))?)))
    }

    /// The largest id of the second `time` falls in, like the server's `xid12_max`.
    pub fn max_for(time: SystemTime) -> Result<Xid, Error> {
        Ok(Xid(core::Xid::max_at(core::time_field(unix_seconds(
            time,
        ))?)))
    }

    /// The creation second, as a time.
    pub fn time(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.0.time().into())
    }

    /// The creation second, as a unix second.
    pub fn unix_seconds(&self) -> u32 {
        self.0.time()
    }

    pub fn machine(&self) -> [u8; 3] {
        self.0.machine()
    }

    pub fn pid(&self) -> u16 {
        self.0.pid()
    }

    /// The 24-bit counter.
    pub fn counter(&self) -> u32 {
        self.0.counter()
    }

    /// A new id from this process's generator, like the server's `gen_xid12()`: the machine id
    /// of [`default_machine`], the low 16 bits of the process id, a counter from a random
    /// start. Ids from one process strictly increase, across threads, a counter wrap and a
    /// clock step back.
    ///
    /// # Panics
    /// When the clock reads a time outside 1970 .. 2106-02-07 (or ids have borrowed seconds up
    /// to that end); [`Xid::try_new`] returns that as an error instead.
    #[allow(clippy::new_without_default)]
    pub fn new() -> Xid {
        Xid::try_new().unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Xid::new`], with a clock outside the xid12 time range as an error.
    pub fn try_new() -> Result<Xid, Error> {
        static PROCESS: OnceLock<XidGenerator> = OnceLock::new();
        PROCESS.get_or_init(XidGenerator::new).next_id()
    }

    fn text(&self) -> [u8; TEXT_LEN] {
        self.0.to_text()
    }
}

/// Unix seconds of a time, rounded down (also before 1970).
fn unix_seconds(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
        Err(before) => {
            let d = before.duration();
            let whole = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
            if d.subsec_nanos() > 0 {
                -whole - 1
            } else {
                -whole
            }
        }
    }
}

impl fmt::Display for Xid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.text();
        // base32hex output is ASCII.
        f.pad(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)
    }
}

impl fmt::Debug for Xid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Xid({self})")
    }
}

impl FromStr for Xid {
    type Err = Error;
    fn from_str(text: &str) -> Result<Xid, Error> {
        Xid::parse(text)
    }
}

impl TryFrom<&[u8]> for Xid {
    type Error = Error;
    /// Exactly 12 bytes, as the server's binary form.
    fn try_from(bytes: &[u8]) -> Result<Xid, Error> {
        core::Xid::from_slice(bytes)
            .map(Xid)
            .map_err(|e| Error::XidBytes { len: e.len })
    }
}

impl From<[u8; LEN]> for Xid {
    fn from(bytes: [u8; LEN]) -> Xid {
        Xid::from_bytes(bytes)
    }
}

impl From<Xid> for [u8; LEN] {
    fn from(id: Xid) -> [u8; LEN] {
        *id.as_bytes()
    }
}

impl AsRef<[u8]> for Xid {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// The server's default machine id (when `pg_idgen.machine_id` is not set), which is rs/xid's:
/// the first 3 bytes of md5 of the host name. On a system without
/// `/proc/sys/kernel/hostname`, the `HOSTNAME` variable; without either, 3 random bytes.
pub fn default_machine() -> [u8; 3] {
    static MACHINE: OnceLock<[u8; 3]> = OnceLock::new();
    *MACHINE.get_or_init(|| {
        let host = std::fs::read("/proc/sys/kernel/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok().map(String::into_bytes))
            .filter(|h| !h.trim_ascii().is_empty());
        match host {
            Some(h) => core::machine_from_hostname(h.trim_ascii_end()),
            None => {
                let [_, a, b, c] = random_u32().to_be_bytes();
                [a, b, c]
            }
        }
    })
}

/// A machine id from an integer 0 ..= 16777215, as the server's `pg_idgen.machine_id`.
pub fn machine_from_int(value: i64) -> Result<[u8; 3], Error> {
    Ok(core::machine_from_int(value)?)
}

/// 32 random bits from the standard library's per-process hash keys (seeded by the OS).
pub(crate) fn random_u32() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish() as u32
}

/// A clock giving unix seconds; the system clock by default, a fake one in tests.
pub type SecondsClock = Box<dyn Fn() -> i64 + Send + Sync>;

fn system_seconds() -> i64 {
    unix_seconds(SystemTime::now())
}

/// An rs/xid generator, the state machine of the server's `gen_xid12()`: every id it makes is
/// strictly greater than the one before (a counter wrap or a clock step back borrows the next
/// second, a step back keeps the last second). Thread-safe; [`Xid::new`] is one per process.
///
/// Generators of one process must not share a machine id and pid unless their counters are
/// shared: two generators make distinct ids only if they differ in machine id or pid.
///
/// Unless a pid is given, the pid field follows the process: in a child made by `fork()`, the
/// first id takes the child's pid and a fresh random counter start, so parent and child do not
/// make the same ids.
pub struct XidGenerator {
    machine: [u8; 3],
    /// `Some`: the pid field given by [`XidGenerator::pid`]; `None`: the process's.
    fixed_pid: Option<u16>,
    clock: SecondsClock,
    state: Mutex<State>,
}

#[derive(Clone, Copy)]
struct State {
    generator: Generator,
    counter: LocalCounter,
    /// The process the counter was started in.
    process: u32,
}

impl State {
    fn new() -> State {
        State {
            generator: Generator::new(),
            counter: LocalCounter::starting_at(random_u32()),
            process: std::process::id(),
        }
    }
}

impl fmt::Debug for XidGenerator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("XidGenerator")
            .field("machine", &self.machine)
            .field("fixed_pid", &self.fixed_pid)
            .finish_non_exhaustive()
    }
}

impl Default for XidGenerator {
    fn default() -> Self {
        XidGenerator::new()
    }
}

impl XidGenerator {
    /// With the server's default machine id, this process's pid, a random counter start and
    /// the system clock.
    pub fn new() -> XidGenerator {
        XidGenerator::with_machine(default_machine())
    }

    /// With this machine id (e.g. one per edge device; see [`machine_from_int`]).
    pub fn with_machine(machine: [u8; 3]) -> XidGenerator {
        XidGenerator {
            machine,
            fixed_pid: None,
            clock: Box::new(system_seconds),
            state: Mutex::new(State::new()),
        }
    }

    /// A fixed pid field (by default the low 16 bits of the process id, as the server's).
    pub fn pid(mut self, pid: u16) -> XidGenerator {
        self.fixed_pid = Some(pid);
        self
    }

    /// The counter's first value (24 bits; random by default).
    pub fn counter_start(self, start: u32) -> XidGenerator {
        let mut state = self
            .state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        state.counter = LocalCounter::starting_at(start);
        XidGenerator {
            state: Mutex::new(state),
            ..self
        }
    }

    /// Another clock, in unix seconds (tests step it back and forth).
    pub fn clock(mut self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> XidGenerator {
        self.clock = Box::new(clock);
        self
    }

    pub fn machine(&self) -> [u8; 3] {
        self.machine
    }

    /// The next id. An error only when the clock (or a borrowed second) is outside the xid12
    /// time range; the state is then unchanged.
    pub fn next_id(&self) -> Result<Xid, Error> {
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = *guard;
        let pid = match self.fixed_pid {
            Some(pid) => pid,
            None => {
                let process = std::process::id();
                if process != next.process {
                    // A forked child: its own pid, and a counter of its own.
                    next.counter = LocalCounter::starting_at(random_u32() ^ process);
                    next.process = process;
                }
                process as u16
            }
        };
        let id = next
            .generator
            .next((self.clock)(), self.machine, pid, next.counter.take())?;
        *guard = next;
        Ok(Xid(id))
    }
}
