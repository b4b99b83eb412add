//! The rs/xid layout and its generator.
//!
//! Bytes, big-endian: 0–3 unix seconds, 4–6 machine id, 7–8 process id, 9–11 counter.
//! Byte order is sort order is creation-second order.

use crate::base32hex;
use crate::words::Words;
use md5::{Digest, Md5};

pub const LEN: usize = base32hex::BYTES;
pub const TEXT_LEN: usize = base32hex::CHARS;
pub const MAX_COUNTER: u32 = 0x00ff_ffff;
pub const MAX_MACHINE: u32 = 0x00ff_ffff;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Xid(pub [u8; LEN]);

/// Byte order, compared as two big-endian words (the sort's hot path).
impl Ord for Xid {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let head = |x: &Xid| {
            u64::from_be_bytes([
                x.0[0], x.0[1], x.0[2], x.0[3], x.0[4], x.0[5], x.0[6], x.0[7],
            ])
        };
        let tail = |x: &Xid| u32::from_be_bytes([x.0[8], x.0[9], x.0[10], x.0[11]]);
        head(self)
            .cmp(&head(other))
            .then_with(|| tail(self).cmp(&tail(other)))
    }
}

impl PartialOrd for Xid {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Why parts do not make an xid; the glue words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XidError {
    /// A unix second outside what 32 unsigned bits hold (1970-01-01 .. 2106-02-07 06:28:15 UTC).
    TimeOutOfRange(i64),
    CounterOutOfRange(i64),
    MachineOutOfRange(i64),
    MachineLength(usize),
    PidOutOfRange(i64),
}

impl XidError {
    /// The message (no DETAIL): a time is a datetime error, the other parts bad parameters.
    pub fn words(&self) -> Words {
        Words::new(match *self {
            XidError::TimeOutOfRange(s) => format!(
                "timestamp out of range for xid12: unix second {s} is outside 1970-01-01 \
                 00:00:00 .. 2106-02-07 06:28:15 UTC"
            ),
            XidError::CounterOutOfRange(v) => {
                format!("xid12 counter {v} is outside the range 0 .. {MAX_COUNTER}")
            }
            XidError::MachineOutOfRange(v) => {
                format!("xid12 machine id {v} is outside the range 0 .. {MAX_MACHINE}")
            }
            XidError::MachineLength(n) => format!("xid12 machine id must be 3 bytes, got {n}"),
            XidError::PidOutOfRange(v) => {
                format!("xid12 pid {v} is outside the range 0 .. {}", u16::MAX)
            }
        })
    }
}

/// Bytes that are not an xid12 (binary input, a cast from bytea): `len` bytes, not [`LEN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BytesLengthError {
    pub len: usize,
}

impl BytesLengthError {
    pub fn words(&self) -> Words {
        Words::with_detail(
            "invalid binary xid12 value",
            format!("An xid12 is exactly {LEN} bytes; got {}.", self.len),
        )
    }
}

/// The id of these parts as a 96-bit number: ids compare as their numbers do. The generator
/// works on numbers in registers and writes the bytes once: an id built field by field in
/// memory and read back as words for the comparison stalls on store forwarding, which cost
/// more than the rest of the generator.
#[inline]
fn number(time: u32, machine: [u8; 3], pid: u16, counter: u32) -> u128 {
    let [m0, m1, m2] = machine;
    u128::from(time) << 64
        | u128::from(m0) << 56
        | u128::from(m1) << 48
        | u128::from(m2) << 40
        | u128::from(pid) << 24
        | u128::from(counter)
}

/// Checks that a unix second fits the 32-bit time field.
pub fn time_field(unix_seconds: i64) -> Result<u32, XidError> {
    u32::try_from(unix_seconds).map_err(|_| XidError::TimeOutOfRange(unix_seconds))
}

impl Xid {
    pub fn from_parts(
        time: u32,
        machine: [u8; 3],
        pid: u16,
        counter: u32,
    ) -> Result<Xid, XidError> {
        if counter > MAX_COUNTER {
            return Err(XidError::CounterOutOfRange(counter.into()));
        }
        Ok(Xid::from_number(number(time, machine, pid, counter)))
    }

    /// The id whose bytes are the big-endian form of the low 96 bits of `n`.
    #[inline]
    fn from_number(n: u128) -> Xid {
        let bytes = n.to_be_bytes();
        let mut b = [0u8; LEN];
        b.copy_from_slice(&bytes[16 - LEN..]);
        Xid(b)
    }

    /// Builds an id from unchecked parts, as given in SQL.
    pub fn from_raw_parts(
        unix_seconds: i64,
        machine: &[u8],
        pid: i64,
        counter: i64,
    ) -> Result<Xid, XidError> {
        let time = time_field(unix_seconds)?;
        let machine =
            <[u8; 3]>::try_from(machine).map_err(|_| XidError::MachineLength(machine.len()))?;
        let pid = u16::try_from(pid).map_err(|_| XidError::PidOutOfRange(pid))?;
        let counter = u32::try_from(counter)
            .ok()
            .filter(|c| *c <= MAX_COUNTER)
            .ok_or(XidError::CounterOutOfRange(counter))?;
        Xid::from_parts(time, machine, pid, counter)
    }

    /// The smallest id of a second: every field after the time is zero.
    pub fn min_at(time: u32) -> Xid {
        let mut b = [0u8; LEN];
        b[0..4].copy_from_slice(&time.to_be_bytes());
        Xid(b)
    }

    /// The largest id of a second: every field after the time is all ones.
    pub fn max_at(time: u32) -> Xid {
        let mut b = [0xffu8; LEN];
        b[0..4].copy_from_slice(&time.to_be_bytes());
        Xid(b)
    }

    pub fn time(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    pub fn machine(&self) -> [u8; 3] {
        [self.0[4], self.0[5], self.0[6]]
    }

    pub fn pid(&self) -> u16 {
        u16::from_be_bytes([self.0[7], self.0[8]])
    }

    pub fn counter(&self) -> u32 {
        u32::from_be_bytes([0, self.0[9], self.0[10], self.0[11]])
    }

    /// An 8-byte sort key that never contradicts the order of ids: `a < b` implies
    /// `a.abbreviated(base) <= b.abbreviated(base)` for any fixed `base`, so a sort may compare
    /// keys first and the ids only on ties.
    ///
    /// The first 8 bytes of the id (time, machine, one pid byte) would do, but ids made in a
    /// burst by one process all share them. So the key is the time (32 bits), then a 32-bit
    /// code of (machine, pid, counter) relative to `base` (the sort's first id), built from
    /// ordered regions:
    ///
    /// | machine, pid        | code                                      |
    /// |---------------------|-------------------------------------------|
    /// | machine below base  | machine << 6 \| pid >> 10                  |
    /// | base machine, pid below base | 2^30 + 2^24 + (pid << 14 \| counter >> 10) |
    /// | base machine and pid | 2^30 + 2^24 + (pid << 14) + counter (exact) |
    /// | base machine, pid above base | 2^30 + 2^25 + (pid << 14 \| counter >> 10) |
    /// | machine above base  | 2^30 + 2^31 + (machine << 6 \| pid >> 10)   |
    ///
    /// Each region's codes lie above the one before, and within a region the code does not
    /// decrease as (machine, pid, counter) grows, so the whole key keeps the order. Ids of
    /// the base's process are told apart exactly; ids of other machines by machine and the
    /// pid's top 6 bits, so that ids of many machines and processes made in the same second
    /// seldom tie.
    pub fn abbreviated(&self, base: &Xid) -> u64 {
        const REGION: u32 = 1 << 24;
        const OTHER: u32 = 1 << 30;
        let machine = |x: &Xid| u32::from_be_bytes([0, x.0[4], x.0[5], x.0[6]]);
        let (m, m0) = (machine(self), machine(base));
        let (pid, pid0, counter) = (u32::from(self.pid()), u32::from(base.pid()), self.counter());
        let code = if m < m0 {
            (m << 6) | (pid >> 10)
        } else if m > m0 {
            OTHER + (1 << 31) + ((m << 6) | (pid >> 10))
        } else if pid < pid0 {
            OTHER + REGION + ((pid << 14) | (counter >> 10))
        } else if pid == pid0 {
            OTHER + REGION + (pid0 << 14) + counter
        } else {
            OTHER + REGION + REGION + ((pid << 14) | (counter >> 10))
        };
        (u64::from(self.time()) << 32) | u64::from(code)
    }

    pub fn to_text(&self) -> [u8; TEXT_LEN] {
        base32hex::encode(&self.0)
    }

    pub fn parse(text: &[u8]) -> Result<Xid, base32hex::DecodeError> {
        base32hex::decode(text).map(Xid)
    }

    /// The id of exactly [`LEN`] bytes.
    pub fn from_slice(bytes: &[u8]) -> Result<Xid, BytesLengthError> {
        <[u8; LEN]>::try_from(bytes)
            .map(Xid)
            .map_err(|_| BytesLengthError { len: bytes.len() })
    }
}

/// rs/xid's machine id: the first three bytes of md5(host name).
pub fn machine_from_hostname(hostname: &[u8]) -> [u8; 3] {
    let digest = Md5::digest(hostname);
    [digest[0], digest[1], digest[2]]
}

pub fn machine_from_int(value: i64) -> Result<[u8; 3], XidError> {
    match u32::try_from(value) {
        Ok(v) if v <= MAX_MACHINE => {
            let b = v.to_be_bytes();
            Ok([b[1], b[2], b[3]])
        }
        _ => Err(XidError::MachineOutOfRange(value)),
    }
}

/// A counter private to one process, starting from a random value.
#[derive(Debug, Clone, Copy)]
pub struct LocalCounter(u32);

impl LocalCounter {
    pub fn starting_at(seed: u32) -> Self {
        LocalCounter(seed & MAX_COUNTER)
    }

    pub fn take(&mut self) -> u32 {
        let value = self.0;
        self.0 = (self.0 + 1) & MAX_COUNTER;
        value
    }
}

/// The generator of one process: every id it makes is strictly greater than the one before,
/// whatever the clock, the counter and the machine id do.
///
/// The caller gives the clock's unix second, the machine id and pid, and the next value of
/// the (local or cluster-wide) counter, which moves on by at least one between calls and
/// wraps at 24 bits.
#[derive(Debug, Clone, Copy, Default)]
pub struct Generator {
    /// The last id, as its [`number`].
    last: Option<u128>,
}

impl Generator {
    pub const fn new() -> Self {
        Generator { last: None }
    }

    /// A generator whose every id is greater than `last` (a high-water mark kept elsewhere,
    /// e.g. an edge device's file), as if it had made `last` itself. `None`: [`Self::new`].
    pub fn resume(last: Option<Xid>) -> Self {
        Generator {
            last: last.map(|id| id.0.iter().fold(0u128, |n, b| n << 8 | u128::from(*b))),
        }
    }

    pub fn next(
        &mut self,
        now: i64,
        machine: [u8; 3],
        pid: u16,
        counter: u32,
    ) -> Result<Xid, XidError> {
        let counter = counter & MAX_COUNTER;
        let id = match self.last {
            None => number(time_field(now)?, machine, pid, counter),
            Some(last) => {
                let last_time = (last >> 64) as u32;
                // A clock that steps back keeps the last second.
                let time = time_field(now.max(last_time.into()))?;
                let id = number(time, machine, pid, counter);
                if id > last {
                    id
                } else {
                    // Same second and the counter wrapped, or the machine id went down:
                    // borrow the next second.
                    number(time_field(i64::from(last_time) + 1)?, machine, pid, counter)
                }
            }
        };
        self.last = Some(id);
        Ok(Xid::from_number(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MACHINE: [u8; 3] = [1, 2, 3];

    #[test]
    fn layout_is_big_endian() {
        let id = Xid::from_parts(0x4d88e15b, [0x60, 0xf4, 0x86], 0xe428, 0x412dc9).unwrap();
        assert_eq!(&id.to_text(), b"9m4e2mr0ui3e8a215n4g");
        assert_eq!(id.time(), 0x4d88e15b);
        assert_eq!(id.machine(), [0x60, 0xf4, 0x86]);
        assert_eq!(id.pid(), 0xe428);
        assert_eq!(id.counter(), 0x412dc9);
    }

    #[test]
    fn rejects_out_of_range_parts() {
        assert_eq!(
            Xid::from_parts(0, MACHINE, 0, 1 << 24),
            Err(XidError::CounterOutOfRange(1 << 24))
        );
        assert_eq!(time_field(-1), Err(XidError::TimeOutOfRange(-1)));
        assert_eq!(time_field(1 << 32), Err(XidError::TimeOutOfRange(1 << 32)));
        assert_eq!(time_field(u32::MAX.into()), Ok(u32::MAX));
        assert_eq!(
            machine_from_int(16_777_216),
            Err(XidError::MachineOutOfRange(16_777_216))
        );
        assert_eq!(machine_from_int(-1), Err(XidError::MachineOutOfRange(-1)));
        assert_eq!(machine_from_int(0x010203), Ok([1, 2, 3]));
    }

    #[test]
    fn raw_parts_are_checked() {
        assert_eq!(
            Xid::from_raw_parts(-1, &[0; 3], 0, 0),
            Err(XidError::TimeOutOfRange(-1))
        );
        assert_eq!(
            Xid::from_raw_parts(0, &[0; 4], 0, 0),
            Err(XidError::MachineLength(4))
        );
        assert_eq!(
            Xid::from_raw_parts(0, &[0; 3], 65536, 0),
            Err(XidError::PidOutOfRange(65536))
        );
        assert_eq!(
            Xid::from_raw_parts(0, &[0; 3], -1, 0),
            Err(XidError::PidOutOfRange(-1))
        );
        assert_eq!(
            Xid::from_raw_parts(0, &[0; 3], 0, -1),
            Err(XidError::CounterOutOfRange(-1))
        );
        assert_eq!(
            Xid::from_raw_parts(7, &[1, 2, 3], 65535, 0xffffff),
            Xid::from_parts(7, [1, 2, 3], 65535, 0xffffff)
        );
    }

    #[test]
    fn abbreviation_regions() {
        let base = Xid::from_parts(5, [1, 2, 3], 0x0102, 9).unwrap();
        let key = |m: [u8; 3], pid: u16, counter: u32| {
            Xid::from_parts(5, m, pid, counter)
                .unwrap()
                .abbreviated(&base)
        };
        assert_eq!(
            key([1, 2, 3], 0x0102, 9),
            (5 << 32) | ((1 << 30) + (1 << 24) + (0x0102 << 14) + 9)
        );
        assert_eq!(key([0, 0, 7], 0xffff, 0xff_ffff), (5 << 32) | (7 << 6 | 63));
        assert_eq!(
            key([0xff, 0xff, 0xff], 0, 0),
            (5 << 32) | ((1u64 << 30) + (1 << 31) + (0xff_ffff << 6))
        );
        assert_eq!(
            key([0xff, 0xff, 0xff], 0xffff, 0xff_ffff),
            (5 << 32) | 0xffff_ffff
        );
        // Other machines' processes are told apart by the pid's top 6 bits.
        assert!(key([0, 0, 7], 0x03ff, 0) < key([0, 0, 7], 0x0400, 0));
        assert!(key([9, 0, 7], 0x03ff, 0) < key([9, 0, 7], 0x0400, 0));
        assert!(key([1, 2, 3], 0x0101, 0xff_ffff) < key([1, 2, 3], 0x0102, 0));
        assert!(key([1, 2, 3], 0x0102, 0xff_ffff) < key([1, 2, 3], 0x0103, 0));
        assert!(key([1, 2, 3], 0xffff, 0xff_ffff) < key([1, 2, 4], 0, 0));
        assert!(key([1, 2, 2], 0xffff, 0xff_ffff) < key([1, 2, 3], 0, 0));
        // The key of the base's process is exact.
        assert!(key([1, 2, 3], 0x0102, 10) > key([1, 2, 3], 0x0102, 9));
    }

    #[test]
    fn min_and_max_bracket_the_second() {
        let id = Xid::from_parts(1000, [0xff; 3], 0xffff, MAX_COUNTER).unwrap();
        assert_eq!(Xid::max_at(1000), id);
        assert!(Xid::min_at(1000) < Xid::from_parts(1000, [0; 3], 0, 1).unwrap());
        assert!(Xid::max_at(999) < Xid::min_at(1000));
    }

    #[test]
    fn machine_id_is_md5_prefix() {
        // md5("") = d41d8cd98f00b204e9800998ecf8427e
        assert_eq!(machine_from_hostname(b""), [0xd4, 0x1d, 0x8c]);
    }

    fn time_and_counter(id: Result<Xid, XidError>) -> Result<(u32, u32), XidError> {
        id.map(|x| (x.time(), x.counter()))
    }

    #[test]
    fn counter_wrap_borrows_a_second() {
        let mut g = Generator::new();
        let mut next = |now, counter| time_and_counter(g.next(now, MACHINE, 42, counter));
        assert_eq!(next(100, MAX_COUNTER), Ok((100, MAX_COUNTER)));
        assert_eq!(next(100, 0), Ok((101, 0)));
        // The borrowed second is kept while the clock is still behind it.
        assert_eq!(next(100, 1), Ok((101, 1)));
        assert_eq!(next(102, 0), Ok((102, 0)));
    }

    #[test]
    fn clock_step_back_keeps_last_second() {
        let mut g = Generator::new();
        let mut next = |now, counter| time_and_counter(g.next(now, MACHINE, 42, counter));
        assert_eq!(next(500, 7), Ok((500, 7)));
        assert_eq!(next(400, 8), Ok((500, 8)));
        assert_eq!(next(400, 3), Ok((501, 3)));
    }

    #[test]
    fn lower_machine_id_borrows_a_second() {
        let mut g = Generator::new();
        let first = g.next(500, [9, 9, 9], 42, 7).unwrap();
        let second = g.next(500, [1, 2, 3], 42, 8).unwrap();
        assert!(second > first);
        assert_eq!(
            (second.time(), second.machine(), second.counter()),
            (501, [1, 2, 3], 8)
        );
    }

    #[test]
    fn end_of_time_is_an_error_not_a_wrap() {
        let mut g = Generator::new();
        let last = i64::from(u32::MAX);
        assert!(g.next(last, MACHINE, 42, 5).is_ok());
        assert_eq!(
            g.next(last, MACHINE, 42, 5),
            Err(XidError::TimeOutOfRange(last + 1))
        );
        assert_eq!(
            g.next(last + 1, MACHINE, 42, 6),
            Err(XidError::TimeOutOfRange(last + 1))
        );
        assert_eq!(
            Generator::new().next(-5, MACHINE, 42, 6),
            Err(XidError::TimeOutOfRange(-5))
        );
    }

    #[test]
    fn local_counter_wraps_at_24_bits() {
        let mut c = LocalCounter::starting_at(u32::MAX);
        assert_eq!(c.take(), MAX_COUNTER);
        assert_eq!(c.take(), 0);
    }

    /// Ids that differ in few places, near the base, so that every region and border is hit.
    fn near(base: Xid) -> impl Strategy<Value = Xid> {
        (
            any::<[bool; 4]>(),
            -2i64..=2,
            -2i64..=2,
            -2i64..=2,
            -3i64..=3,
            any::<Xid12Bytes>(),
        )
            .prop_map(move |(random, dt, dm, dp, dc, Xid12Bytes(raw))| {
                let pick = |r: bool, near: i64, far: i64| if r { far } else { near };
                let nudged = |v: i64, d: i64, max: i64| (v + d).clamp(0, max);
                let other = Xid(raw);
                let m0 = i64::from(u32::from_be_bytes([0, base.0[4], base.0[5], base.0[6]]));
                let mo = i64::from(u32::from_be_bytes([0, other.0[4], other.0[5], other.0[6]]));
                let time = pick(
                    random[0],
                    nudged(base.time().into(), dt, u32::MAX.into()),
                    other.time().into(),
                );
                let machine = pick(random[1], nudged(m0, dm, MAX_MACHINE.into()), mo);
                let pid = pick(
                    random[2],
                    nudged(base.pid().into(), dp, 0xffff),
                    other.pid().into(),
                );
                let counter = pick(
                    random[3],
                    nudged(base.counter().into(), dc, MAX_COUNTER.into()),
                    other.counter().into(),
                );
                Xid::from_raw_parts(time, &machine_from_int(machine).unwrap(), pid, counter)
                    .unwrap()
            })
    }

    #[derive(Debug, Clone, Copy)]
    struct Xid12Bytes([u8; 12]);

    impl Arbitrary for Xid12Bytes {
        type Parameters = ();
        type Strategy = BoxedStrategy<Self>;
        fn arbitrary_with(_: ()) -> Self::Strategy {
            any::<[u8; 12]>().prop_map(Xid12Bytes).boxed()
        }
    }

    fn pairs_near_a_base() -> impl Strategy<Value = (Xid, Xid, Xid)> {
        any::<Xid12Bytes>().prop_flat_map(|Xid12Bytes(raw)| {
            let base = Xid(raw);
            (Just(base), near(base), near(base))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn abbreviation_never_contradicts_order((base, a, b) in pairs_near_a_base()) {
            let (ka, kb) = (a.abbreviated(&base), b.abbreviated(&base));
            if a < b { prop_assert!(ka <= kb, "{:?} < {:?} but keys {:x} > {:x} (base {:?})", a, b, ka, kb, base); }
            if a == b { prop_assert_eq!(ka, kb); }
            // Exact for the base's process.
            if a.machine() == base.machine() && b.machine() == base.machine() && a.pid() == base.pid() && b.pid() == base.pid() && a != b {
                prop_assert_ne!(ka, kb);
            }
        }

        #[test]
        fn abbreviation_never_contradicts_order_of_any_ids(a in any::<[u8; 12]>(), b in any::<[u8; 12]>(), base in any::<[u8; 12]>()) {
            let (a, b, base) = (Xid(a), Xid(b), Xid(base));
            if a < b { prop_assert!(a.abbreviated(&base) <= b.abbreviated(&base)); }
        }
    }

    proptest! {
        #[test]
        fn order_is_byte_order(a in any::<[u8; 12]>(), b in any::<[u8; 12]>(), same in 0usize..12) {
            prop_assert_eq!(Xid(a).cmp(&Xid(b)), a.cmp(&b));
            let mut c = a;
            c[same..].copy_from_slice(&b[same..]);
            prop_assert_eq!(Xid(a).cmp(&Xid(c)), a.cmp(&c));
        }

        #[test]
        fn ids_of_a_process_strictly_increase(
            start in 0i64..4_000_000_000,
            seed in any::<u32>(),
            steps in proptest::collection::vec((-3i64..3, 1u32..5_000_000, any::<[u8; 3]>(), any::<bool>()), 1..400),
        ) {
            let mut g = Generator::new();
            let mut counter = LocalCounter::starting_at(seed);
            let mut machine = MACHINE;
            let mut clock = start;
            let mut previous: Option<Xid> = None;
            for (jitter, skip, other_machine, switch) in steps {
                clock += jitter;
                if switch { machine = other_machine; }
                for _ in 1..skip.min(3) { counter.take(); }
                let id = g.next(clock, machine, 42, counter.take()).unwrap();
                if let Some(p) = previous { prop_assert!(id > p, "{:?} !> {:?}", id, p); }
                prop_assert!(i64::from(id.time()) >= clock);
                prop_assert_eq!(id.machine(), machine);
                previous = Some(id);
            }
        }
    }
}
