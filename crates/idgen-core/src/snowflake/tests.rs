use super::*;
use proptest::prelude::*;

const E: i64 = DEFAULT_EPOCH_MS;

fn cfg(worker: u16, max_backward_ms: u64) -> Config {
    Config {
        epoch_ms: E,
        worker,
        max_backward_ms,
        lease_ms: 0,
    }
}

fn issued(step: Result<Step, SnowflakeError>) -> i64 {
    match step {
        Ok(Step::Issued(id)) => id,
        other => panic!("expected an id, got {other:?}"),
    }
}

#[test]
fn bit_layout_hand_computed() {
    // 1 << 22 = 4194304, 1 << 12 = 4096.
    assert_eq!(compose(1, 1, 1), Ok(4194304 + 4096 + 1));
    // 1000 ms, worker 5, sequence 7: 1000 * 4194304 + 5 * 4096 + 7.
    assert_eq!(compose(1000, 5, 7), Ok(4194304000 + 20480 + 7));
    assert_eq!(compose(0, 0, 0), Ok(0));
    assert_eq!(compose(0, 0, 4095), Ok(0xFFF));
    assert_eq!(compose(0, 1023, 0), Ok(0x3FF000));
    assert_eq!(compose(1, 0, 0), Ok(0x400000));
    assert_eq!(
        compose(MAX_TIMESTAMP, MAX_WORKER, MAX_SEQUENCE),
        Ok(i64::MAX)
    );
    assert_eq!(
        decode(4194324487),
        Ok(Parts {
            ms_since_epoch: 1000,
            worker: 5,
            sequence: 7
        })
    );
    assert_eq!(unix_ms(4194324487, E), Ok(E + 1000));
}

#[test]
fn compose_rejects_out_of_range_parts() {
    assert_eq!(
        compose(MAX_TIMESTAMP + 1, 0, 0),
        Err(SnowflakeError::TimestampOutOfRange {
            ms_since_epoch: 1 << 41
        })
    );
    assert_eq!(
        compose(0, 1024, 0),
        Err(SnowflakeError::WorkerOutOfRange { worker: 1024 })
    );
    assert_eq!(
        compose(0, 0, 4096),
        Err(SnowflakeError::SequenceOutOfRange { sequence: 4096 })
    );
    assert!(compose(u64::MAX, u16::MAX, u16::MAX).is_err());
    assert!(checked_worker(-1).is_err());
    assert_eq!(checked_worker(1023), Ok(1023));
    assert!(checked_worker(1024).is_err());
    assert_eq!(checked_sequence(4095), Ok(4095));
    assert!(checked_sequence(-1).is_err());
}

#[test]
fn negative_ids_are_errors() {
    for id in [-1, i64::MIN, -4194304] {
        let err = SnowflakeError::NegativeId { id };
        assert_eq!(decode(id), Err(err));
        assert_eq!(timestamp_ms(id), Err(err));
        assert_eq!(worker(id), Err(err));
        assert_eq!(sequence(id), Err(err));
        assert_eq!(unix_ms(id, E), Err(err));
    }
}

#[test]
fn epoch_bounds() {
    assert_eq!(validate_epoch(0), Ok(()));
    assert_eq!(validate_epoch(MAX_EPOCH_MS), Ok(()));
    assert!(validate_epoch(-1).is_err());
    assert!(validate_epoch(MAX_EPOCH_MS + 1).is_err());
    assert!(unix_ms(0, -1).is_err());
    assert_eq!(unix_ms(i64::MAX, MAX_EPOCH_MS), Ok(i64::MAX));
    let mut s = SnowflakeState::new();
    for epoch_ms in [-1, i64::MIN, MAX_EPOCH_MS + 1, i64::MAX] {
        let c = Config {
            epoch_ms,
            worker: 0,
            max_backward_ms: 0,
            lease_ms: 0,
        };
        assert_eq!(
            s.next(1_700_000_000_000, &c),
            Err(SnowflakeError::EpochOutOfRange { epoch_ms })
        );
        assert!(c.validate().is_err());
    }
    assert_eq!(s, SnowflakeState::new());
}

#[test]
fn now_before_epoch_is_an_error() {
    let mut s = SnowflakeState::new();
    assert_eq!(
        s.next(E - 1, &cfg(0, 10)),
        Err(SnowflakeError::BeforeEpoch {
            unix_ms: E - 1,
            epoch_ms: E
        })
    );
    assert!(s.next(i64::MIN, &cfg(0, 10)).is_err());
    assert_eq!(s, SnowflakeState::new());
    // Exactly at the epoch: ms 0.
    assert_eq!(issued(s.next(E, &cfg(3, 10))), compose(0, 3, 0).unwrap());
}

#[test]
fn worker_bounds() {
    let mut s = SnowflakeState::new();
    let now = E + 5;
    assert_eq!(
        s.next(now, &cfg(1024, 10)),
        Err(SnowflakeError::WorkerOutOfRange { worker: 1024 })
    );
    assert!(s.next(now, &cfg(u16::MAX, 10)).is_err());
    assert_eq!(s, SnowflakeState::new());
    let id = issued(s.next(now, &cfg(1023, 10)));
    assert_eq!(worker(id), Ok(1023));
    assert_eq!(timestamp_ms(id), Ok(5));
    assert_eq!(sequence(id), Ok(0));
}

#[test]
fn forty_one_bit_limit() {
    let mut s = SnowflakeState::new();
    let last_ok = E + MAX_TIMESTAMP as i64;
    let id = issued(s.next(last_ok, &cfg(7, 10)));
    assert_eq!(id, compose(MAX_TIMESTAMP, 7, 0).unwrap());
    assert!(id > 0);
    let err = s.next(last_ok + 1, &cfg(7, 10)).unwrap_err();
    assert_eq!(
        err,
        SnowflakeError::TimestampOutOfRange {
            ms_since_epoch: 1 << 41
        }
    );
    assert!(s.next(i64::MAX, &cfg(7, 10)).is_err());
    // The default epoch runs out on 2080-07-10 17:30:30.208 UTC.
    assert_eq!(last_ok, 3487858230208);
    assert!(min_id_at(last_ok, E).is_ok());
    assert!(min_id_at(last_ok + 1, E).is_err());
    assert!(max_id_at(last_ok + 1, E).is_err());
    // Exhausting the very last millisecond is an error, not a wait past the range.
    for _ in 0..MAX_SEQUENCE {
        issued(s.next(last_ok, &cfg(7, 10)));
    }
    assert_eq!(
        s.next(last_ok, &cfg(7, 10)),
        Err(SnowflakeError::TimestampOutOfRange {
            ms_since_epoch: 1 << 41
        })
    );
}

#[test]
fn sequence_counts_then_waits_for_next_ms() {
    let mut s = SnowflakeState::new();
    let c = cfg(42, 10);
    let now = E + 1_000_000;
    let mut prev = -1;
    for seq in 0..=MAX_SEQUENCE {
        let id = issued(s.next(now, &c));
        assert!(id > prev);
        prev = id;
        assert_eq!(
            decode(id),
            Ok(Parts {
                ms_since_epoch: 1_000_000,
                worker: 42,
                sequence: seq
            })
        );
    }
    assert_eq!(s.issued_count(), 4096);
    let before = s;
    assert_eq!(s.next(now, &c), Ok(Step::WaitUntil(now + 1)));
    assert_eq!(s, before);
    // Still the same millisecond after "waiting" too little: wait again.
    assert_eq!(s.next(now, &c), Ok(Step::WaitUntil(now + 1)));
    let id = issued(s.next(now + 1, &c));
    assert!(id > prev);
    assert_eq!(sequence(id), Ok(0));
    assert_eq!(timestamp_ms(id), Ok(1_000_001));
    // A later millisecond (skipping some) also restarts at 0.
    let id2 = issued(s.next(now + 1, &c));
    assert_eq!(sequence(id2), Ok(1));
    let id3 = issued(s.next(now + 50, &c));
    assert_eq!(sequence(id3), Ok(0));
    assert_eq!(s.last_id(), Some(id3));
}

#[test]
fn rollback_within_bound_waits() {
    let mut s = SnowflakeState::new();
    let c = cfg(1, 10);
    let t = E + 500;
    let a = issued(s.next(t, &c));
    let b = issued(s.next(t, &c));
    let before = s;
    // Clock steps back 10 ms: at the bound, so wait for the last issued millisecond.
    assert_eq!(s.next(t - 10, &c), Ok(Step::WaitUntil(t)));
    assert_eq!(s.next(t - 1, &c), Ok(Step::WaitUntil(t)));
    assert_eq!(s, before);
    // Once the clock is back at t, the sequence simply continues.
    let c2 = issued(s.next(t, &c));
    assert!(a < b && b < c2);
    assert_eq!(sequence(c2), Ok(2));
    assert_eq!(timestamp_ms(c2), Ok(500));
    let d = issued(s.next(t + 1, &c));
    assert!(d > c2);
}

#[test]
fn rollback_into_exhausted_ms_waits_for_the_next_one() {
    let mut s = SnowflakeState::new();
    let c = cfg(1, 10);
    let t = E + 500;
    for _ in 0..=MAX_SEQUENCE {
        issued(s.next(t, &c));
    }
    assert_eq!(s.next(t - 3, &c), Ok(Step::WaitUntil(t + 1)));
}

#[test]
fn rollback_beyond_bound_is_an_error_and_keeps_state() {
    let mut s = SnowflakeState::new();
    let c = cfg(1, 10);
    let t = E + 10_000;
    let a = issued(s.next(t, &c));
    let before = s;
    let err = s.next(t - 12, &c).unwrap_err();
    assert_eq!(
        err,
        SnowflakeError::ClockMovedBack {
            behind_ms: 12,
            limit_ms: 10
        }
    );
    assert_eq!(s, before);
    // A zero bound refuses any step back but still waits on an exhausted millisecond.
    assert!(s.next(t - 1, &cfg(1, 0)).is_err());
    assert_eq!(s, before);
    let b = issued(s.next(t + 1, &c));
    assert!(b > a);
    assert_eq!(sequence(b), Ok(0));
}

#[test]
fn worker_change_never_goes_backwards() {
    let mut s = SnowflakeState::new();
    let t = E + 777;
    let a = issued(s.next(t, &cfg(500, 10)));
    // Higher worker in the same millisecond: fine, starts at sequence 0.
    let b = issued(s.next(t, &cfg(600, 10)));
    assert!(b > a);
    assert_eq!((worker(b), sequence(b)), (Ok(600), Ok(0)));
    // Lower worker in the same millisecond would go below b: wait for the next ms.
    assert_eq!(s.next(t, &cfg(10, 10)), Ok(Step::WaitUntil(t + 1)));
    let c = issued(s.next(t + 1, &cfg(10, 10)));
    assert!(c > b);
    assert_eq!(worker(c), Ok(10));
}

#[test]
fn epoch_change_never_goes_backwards() {
    let mut s = SnowflakeState::new();
    let now = E + 1_000_000;
    let a = issued(s.next(now, &cfg(1, 10)));
    // Earlier epoch: ids jump ahead.
    let earlier = Config {
        epoch_ms: E - 5_000,
        ..cfg(1, 10)
    };
    let b = issued(s.next(now, &earlier));
    assert!(b > a);
    assert_eq!(unix_ms(b, earlier.epoch_ms), Ok(now));
    // Back to the default epoch: new ids would be 5000 ms behind b.
    let before = s;
    let err = s.next(now + 1, &cfg(1, 10)).unwrap_err();
    assert_eq!(
        err,
        SnowflakeError::EpochChanged {
            old_epoch_ms: E - 5_000,
            new_epoch_ms: E,
            behind_ms: 4_999,
            limit_ms: 10
        }
    );
    assert_eq!(s, before);
    // Once real time has caught up, generation resumes above b.
    assert_eq!(
        s.next(now + 4_990, &cfg(1, 10)),
        Ok(Step::WaitUntil(now + 5_000))
    );
    let c = issued(s.next(now + 5_000, &cfg(1, 10)));
    assert!(c > b);
    assert_eq!(sequence(c), Ok(1));
}

#[test]
fn min_max_bounds_bracket_every_id_of_the_ms() {
    let t = E + 123_456;
    let lo = min_id_at(t, E).unwrap();
    let hi = max_id_at(t, E).unwrap();
    assert_eq!(lo, compose(123_456, 0, 0).unwrap());
    assert_eq!(hi, compose(123_456, 1023, 4095).unwrap());
    assert_eq!(max_id_at(t - 1, E).unwrap() + 1, lo);
    assert_eq!(min_id_at(t + 1, E).unwrap() - 1, hi);
    for w in [0, 1, 511, 1023] {
        for q in [0, 1, 2048, 4095] {
            let id = compose(123_456, w, q).unwrap();
            assert!(lo <= id && id <= hi);
        }
    }
    let mut s = SnowflakeState::new();
    for _ in 0..4096 {
        let id = issued(s.next(t, &cfg(1023, 0)));
        assert!(lo <= id && id <= hi);
    }
    assert_eq!(min_id_at(E, E), Ok(0));
    // Before the epoch: bounds below every id, for open-ended ranges.
    assert_eq!(min_id_at(E - 1, E), Ok(0));
    assert_eq!(min_id_at(i64::MIN, E), Ok(0));
    assert_eq!(max_id_at(E - 1, E), Ok(-1));
    assert_eq!(max_id_at(i64::MIN, E), Ok(-1));
    assert_eq!(
        max_id_at(E, E),
        Ok(compose(0, MAX_WORKER, MAX_SEQUENCE).unwrap())
    );
    assert!(max_id_at(i64::MAX, E).is_err());
    assert!(min_id_at(0, -1).is_err());
}

#[test]
fn state_is_plain_shared_memory_data() {
    fn assert_copy<T: Copy + Default>() {}
    assert_copy::<SnowflakeState>();
    assert_eq!(std::mem::size_of::<SnowflakeState>(), 40);
    assert_eq!(SnowflakeState::default(), SnowflakeState::new());
    assert_eq!(SnowflakeState::new().last_id(), None);
    assert_eq!(SnowflakeState::new().issued_count(), 0);
}

/// One simulated call: how far true time advances, the clock's error (ms, <= 0 means a
/// reading behind true time), the worker and the epoch offset from the default.
type Reading = (i64, i64, u16, i64);

/// Drives a state like the SQL glue would: true time never goes back, a clock reading is
/// true time plus jitter, and on `WaitUntil(t)` true time is moved on to `t`. Checks every
/// invariant along the way.
fn drive(s: &mut SnowflakeState, readings: &[Reading], max_backward_ms: u64) {
    drive_with_restarts(s, readings, max_backward_ms, 0, &[]);
}

#[derive(Clone, Copy, Debug)]
enum Restart {
    /// The shutdown hook writes the exact mark.
    Clean,
    /// Nothing is written: the last persisted lease is all that is left.
    Crash,
}

/// [`drive`] with a lease and restarts: before reading `i`, `restarts` may replace the
/// state by one resumed from the file, as a restart of the server would. Across restarts
/// ids still strictly increase, and every issued id is covered by the persisted lease.
fn drive_with_restarts(
    s: &mut SnowflakeState,
    readings: &[Reading],
    max_backward_ms: u64,
    lease_ms: u64,
    restarts: &[(usize, Restart)],
) {
    let mut prev: Option<i64> = None;
    let mut file: Option<Mark> = None;
    let mut true_time = E + 1_000;
    let mut since_restart = 0u64;
    for (i, &(advance, jitter, w, epoch_delta)) in readings.iter().enumerate() {
        for &(_, r) in restarts.iter().filter(|(at, _)| *at == i) {
            match r {
                Restart::Clean => {
                    if let Some(m) = s.shutdown_mark() {
                        file = Some(m);
                    }
                }
                Restart::Crash => {}
            }
            *s = SnowflakeState::resume(file);
            since_restart = 0;
        }
        true_time += advance;
        let clock = true_time + jitter;
        let c = Config {
            epoch_ms: E + epoch_delta,
            worker: w,
            max_backward_ms,
            lease_ms,
        };
        let before = *s;
        let mut step = s.next(clock, &c);
        if let Ok(Step::ExtendLease(l)) = step {
            assert!(lease_ms > 0);
            assert_eq!(*s, before);
            assert!(l > s.lease_id());
            file = Some(SnowflakeState::lease_mark(l, &c));
            s.lease_extended(l);
            step = s.next(clock, &c);
        }
        match step {
            Ok(Step::Issued(id)) => {
                assert!(id >= 0);
                if let Some(p) = prev {
                    assert!(id > p, "{id} not above {p}");
                }
                prev = Some(id);
                since_restart += 1;
                assert_eq!(worker(id), Ok(w));
                assert_eq!(unix_ms(id, c.epoch_ms), Ok(clock));
                assert_eq!(s.last_id(), Some(id));
                if lease_ms > 0 {
                    assert!(id <= s.lease_id());
                    assert!(file.is_some_and(|m| m.id >= id));
                }
            }
            Ok(Step::WaitUntil(t)) => {
                assert!(t > clock);
                assert_eq!(*s, before);
                true_time = true_time.max(t);
            }
            Ok(Step::ExtendLease(l)) => panic!("a second lease {l} right after one"),
            Err(e) => {
                assert!(
                    matches!(
                        e,
                        SnowflakeError::ClockMovedBack { .. }
                            | SnowflakeError::EpochChanged { .. }
                            | SnowflakeError::BehindRestoredMark { .. }
                    ),
                    "{e:?}"
                );
                if let SnowflakeError::BehindRestoredMark { .. } = e {
                    assert_eq!(since_restart, 0);
                }
                assert_eq!(*s, before);
            }
        }
    }
}

#[test]
fn resumed_state_issues_above_the_mark() {
    let c = cfg(7, 1000);
    let mark = Mark {
        kind: MarkKind::Shutdown,
        id: compose(5_000, 9, 17).unwrap(),
        epoch_ms: E,
    };
    let fresh = SnowflakeState::resume(None);
    assert_eq!(fresh, SnowflakeState::new());
    let mut s = SnowflakeState::resume(Some(mark));
    assert_eq!(s.last_id(), Some(mark.id));
    assert_eq!(s.issued_count(), 0);
    // Clean shutdown right away: the same mark again.
    assert_eq!(s.shutdown_mark(), Some(mark));
    // Clock well past the mark: ids from the clock.
    let mut probe = s;
    let a = issued(probe.next(E + 9_000, &c));
    assert_eq!(a, compose(9_000, 7, 0).unwrap());
    // Same millisecond, lower worker: next millisecond.
    assert_eq!(s.next(E + 5_000, &c), Ok(Step::WaitUntil(E + 5_001)));
    // Clock behind the mark within the bound: wait for it.
    assert_eq!(s.next(E + 4_500, &c), Ok(Step::WaitUntil(E + 5_001)));
    // Further behind: the restart's own error, and the state keeps the mark.
    let before = s;
    assert_eq!(
        s.next(E + 3_000, &c),
        Err(SnowflakeError::BehindRestoredMark {
            behind_ms: 2_000,
            limit_ms: 1000
        })
    );
    assert_eq!(s, before);
    // A higher worker in the mark's millisecond is already above it.
    let b = issued(s.next(E + 5_000, &cfg(10, 1000)));
    assert!(b > mark.id);
    assert_eq!(s.issued_count(), 1);
    // Once an id is out, a clock far behind is the ordinary error.
    assert_eq!(
        s.next(E + 3_000, &cfg(10, 1000)),
        Err(SnowflakeError::ClockMovedBack {
            behind_ms: 2_000,
            limit_ms: 1000
        })
    );
    assert_eq!(
        s.shutdown_mark(),
        Some(Mark {
            kind: MarkKind::Shutdown,
            id: b,
            epoch_ms: E
        })
    );
}

#[test]
fn lease_is_persisted_before_any_id_above_it() {
    let c = Config {
        lease_ms: 1000,
        ..cfg(3, 1000)
    };
    let mut s = SnowflakeState::new();
    let t = E + 10_000;
    let before = s;
    let l = match s.next(t, &c) {
        Ok(Step::ExtendLease(l)) => l,
        other => panic!("expected a lease, got {other:?}"),
    };
    assert_eq!(s, before);
    assert_eq!(l, compose(11_000, MAX_WORKER, MAX_SEQUENCE).unwrap());
    // Until the caller says it is persisted, the state keeps asking.
    assert_eq!(s.next(t, &c), Ok(Step::ExtendLease(l)));
    s.lease_extended(l);
    let a = issued(s.next(t, &c));
    assert_eq!(a, compose(10_000, 3, 0).unwrap());
    // Every id up to the lease's millisecond goes out without asking...
    let mut leases = 0;
    for ms in 10_000..13_500 {
        loop {
            match s.next(E + ms, &c) {
                Ok(Step::Issued(id)) => {
                    assert!(id <= s.lease_id());
                    break;
                }
                Ok(Step::ExtendLease(l)) => {
                    leases += 1;
                    // Whichever call first crosses the lease extends it a second ahead.
                    assert_eq!(
                        l,
                        compose(ms as u64 + 1000, MAX_WORKER, MAX_SEQUENCE).unwrap()
                    );
                    s.lease_extended(l);
                }
                other => panic!("{other:?}"),
            }
        }
    }
    // ...so 3.5 s of calls persisted 3 more leases: about one a second.
    assert_eq!(leases, 3);
    // A stale (lower) confirmation never shrinks the lease.
    let high = s.lease_id();
    s.lease_extended(l);
    assert_eq!(s.lease_id(), high);
    // Without a lease nothing is ever asked.
    let mut plain = SnowflakeState::new();
    assert_eq!(plain.next(t, &cfg(3, 1000)), Ok(Step::Issued(a)));
}

#[test]
fn after_a_crash_ids_start_above_the_lease() {
    let c = Config {
        lease_ms: 1000,
        ..cfg(3, 1000)
    };
    let mut s = SnowflakeState::new();
    let t = E + 10_000;
    let mut file = None;
    let mut last = 0;
    for ms in 0..400 {
        loop {
            match s.next(t + ms, &c).unwrap() {
                Step::Issued(id) => {
                    last = id;
                    break;
                }
                Step::ExtendLease(l) => {
                    file = Some(SnowflakeState::lease_mark(l, &c));
                    s.lease_extended(l);
                }
                Step::WaitUntil(_) => unreachable!(),
            }
        }
    }
    let mark = file.unwrap();
    assert_eq!(mark.kind, MarkKind::Lease);
    assert!(mark.id > last);
    // The clock after the restart is just past the crash: wait for the lease to pass.
    let mut r = SnowflakeState::resume(Some(mark));
    assert_eq!(r.next(t + 400, &c), Ok(Step::WaitUntil(t + 1_001)));
    assert_eq!(
        r.next(t + 1_001, &c),
        Ok(Step::ExtendLease(compose(12_001, 1023, 4095).unwrap()))
    );
    r.lease_extended(compose(12_001, 1023, 4095).unwrap());
    let first = issued(r.next(t + 1_001, &c));
    assert!(first > mark.id && first > last);
}

#[test]
fn lease_at_the_end_of_the_range() {
    let c = Config {
        lease_ms: 1000,
        ..cfg(3, 1000)
    };
    let mut s = SnowflakeState::new();
    let t = E + MAX_TIMESTAMP as i64 - 10;
    assert_eq!(s.next(t, &c), Ok(Step::ExtendLease(i64::MAX)));
    s.lease_extended(i64::MAX);
    assert!(issued(s.next(t, &c)) > 0);
}

#[test]
fn mark_file_round_trip_and_damage() {
    // The standard CRC-32 check value (zlib's crc32 of "123456789").
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
    let m = Mark {
        kind: MarkKind::Lease,
        id: compose(123, 4, 5).unwrap(),
        epoch_ms: E,
    };
    let bytes = m.encode();
    assert_eq!(&bytes[..8], b"PGIDSNOW");
    assert_eq!(Mark::decode(&bytes), Ok(m));
    let s = Mark {
        kind: MarkKind::Shutdown,
        ..m
    };
    assert_eq!(Mark::decode(&s.encode()), Ok(s));
    for len in [0, 1, 8, 35] {
        assert_eq!(
            Mark::decode(&bytes[..len]),
            Err(MarkFileError::WrongLength { len })
        );
    }
    let mut long = bytes.to_vec();
    long.push(0);
    assert_eq!(
        Mark::decode(&long),
        Err(MarkFileError::WrongLength { len: 37 })
    );
    let mut other = bytes;
    other[0] = b'X';
    assert_eq!(Mark::decode(&other), Err(MarkFileError::BadMagic));
    let mut v2 = bytes;
    v2[8] = 2;
    assert_eq!(
        Mark::decode(&v2),
        Err(MarkFileError::UnsupportedVersion { version: 2 })
    );
    // Fields out of range with a good checksum: still refused.
    for bad in [Mark { id: -1, ..m }, Mark { epoch_ms: -1, ..m }] {
        assert_eq!(Mark::decode(&bad.encode()), Err(MarkFileError::BadField));
    }
    let mut kind = bytes;
    kind[12] = 9;
    let crc = crc32(&kind[..32]);
    kind[32..].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(Mark::decode(&kind), Err(MarkFileError::BadField));
}

#[test]
fn wal_lease_round_trip_and_damage() {
    let m = Mark {
        kind: MarkKind::Lease,
        id: compose(123, 4, 5).unwrap(),
        epoch_ms: E,
    };
    let bytes = m.encode_wal_lease();
    // Hand-computed: the id and the epoch, little-endian.
    assert_eq!(&bytes[..8], &m.id.to_le_bytes());
    assert_eq!(&bytes[8..], &E.to_le_bytes());
    assert_eq!(Mark::decode_wal_lease(&bytes), Ok(m));
    // A shutdown mark is logged as what it is for a standby: a floor, read back as a lease.
    let s = Mark {
        kind: MarkKind::Shutdown,
        ..m
    };
    assert_eq!(Mark::decode_wal_lease(&s.encode_wal_lease()), Ok(m));
    for len in [0, 8, 15, 17, 36] {
        let mut v = bytes.to_vec();
        v.resize(len, 0);
        assert_eq!(
            Mark::decode_wal_lease(&v),
            Err(MarkFileError::WrongLength { len })
        );
    }
    for bad in [Mark { id: -1, ..m }, Mark { epoch_ms: -1, ..m }] {
        assert_eq!(
            Mark::decode_wal_lease(&bad.encode_wal_lease()),
            Err(MarkFileError::BadField)
        );
    }
}

#[test]
fn a_replayed_lease_raises_the_state_never_lowers_it() {
    let c = Config {
        lease_ms: 1000,
        ..cfg(5, 1000)
    };
    let lease = |ms: u64| Mark {
        kind: MarkKind::Lease,
        id: compose(ms, MAX_WORKER, MAX_SEQUENCE).unwrap(),
        epoch_ms: E,
    };
    // A standby that resumed from an old file (its base backup's) replays newer leases.
    let mut s = SnowflakeState::resume(Some(lease(1_000)));
    assert!(s.raise_to(lease(8_000)));
    assert_eq!(s.last_id(), Some(lease(8_000).id));
    assert_eq!(s.lease_id(), lease(8_000).id);
    // An older record (crash recovery replays from the last checkpoint) changes nothing.
    let before = s;
    assert!(!s.raise_to(lease(7_000)));
    assert!(!s.raise_to(lease(8_000)));
    assert_eq!(s, before);
    // Promoted with a clock 3 s behind the old primary's last ids (about 7 s): no id at or
    // below the floor; the refusal names the restored mark, and the state keeps it.
    assert_eq!(
        s.next(E + 4_000, &c),
        Err(SnowflakeError::BehindRestoredMark {
            behind_ms: 4_000,
            limit_ms: 1000
        })
    );
    assert_eq!(s, before);
    // Within the bound: wait for the millisecond after the floor.
    assert_eq!(s.next(E + 7_500, &c), Ok(Step::WaitUntil(E + 8_001)));
    // Once the clock is past it, the first id asks for a lease of its own, then goes out.
    assert_eq!(
        s.next(E + 8_001, &c),
        Ok(Step::ExtendLease(lease(9_001).id))
    );
    s.lease_extended(lease(9_001).id);
    let id = issued(s.next(E + 8_001, &c));
    assert!(id > lease(8_000).id);
    // A fresh state (no file at all) takes the floor too.
    let mut fresh = SnowflakeState::new();
    assert!(fresh.raise_to(lease(8_000)));
    assert_eq!(fresh, before);
    // A state that has issued ids and then sees a higher floor counts as restored from it.
    let mut busy = SnowflakeState::new();
    busy.lease_extended(lease(3_000).id);
    issued(busy.next(E + 2_000, &c));
    assert!(busy.raise_to(lease(8_000)));
    assert_eq!(busy.issued_count(), 0);
    assert_eq!(busy.last_id(), Some(lease(8_000).id));
}

proptest! {
    #[test]
    fn any_damaged_byte_is_refused(pos in 0usize..Mark::FILE_LEN, flip in 1u8..=255, id in 0i64..=i64::MAX) {
        let m = Mark { kind: MarkKind::Shutdown, id, epoch_ms: E };
        let mut bytes = m.encode();
        bytes[pos] ^= flip;
        prop_assert!(Mark::decode(&bytes).is_err());
    }

    #[test]
    fn ids_increase_across_clean_and_crash_restarts(
        max_backward_ms in 0u64..20,
        lease_ms in 1u64..30,
        steps in prop::collection::vec(
            (
                prop_oneof![6 => Just(0i64), 3 => 1i64..5],
                prop_oneof![8 => Just(0i64), 2 => -25i64..0],
                prop_oneof![Just(0u16), Just(5u16), Just(1023u16)],
                -2i64..3,
            ),
            1..2000,
        ),
        restarts in prop::collection::vec(
            (0usize..2000, prop_oneof![Just(Restart::Clean), Just(Restart::Crash)]),
            0..10,
        ),
    ) {
        let mut s = SnowflakeState::new();
        drive_with_restarts(&mut s, &steps, max_backward_ms, lease_ms, &restarts);
    }

    #[test]
    fn issued_ids_strictly_increase_with_jittery_clock(
        w in 0u16..=MAX_WORKER,
        max_backward_ms in 0u64..20,
        steps in prop::collection::vec(
            (
                prop_oneof![6 => Just(0i64), 3 => 1i64..5],
                prop_oneof![8 => Just(0i64), 2 => -25i64..0],
            ),
            1..3000,
        ),
    ) {
        let readings: Vec<Reading> =
            steps.into_iter().map(|(a, j)| (a, j, w, 0)).collect();
        let mut s = SnowflakeState::new();
        drive(&mut s, &readings, max_backward_ms);
    }

    #[test]
    fn issued_ids_strictly_increase_across_config_changes(
        max_backward_ms in 0u64..20,
        steps in prop::collection::vec(
            (
                0i64..3,
                -5i64..1,
                prop_oneof![Just(0u16), Just(5u16), Just(1023u16)],
                -2i64..3,
            ),
            1..2000,
        ),
    ) {
        let mut s = SnowflakeState::new();
        drive(&mut s, &steps, max_backward_ms);
    }

    #[test]
    fn compose_decode_round_trip(
        ms in 0..=MAX_TIMESTAMP,
        w in 0..=MAX_WORKER,
        q in 0..=MAX_SEQUENCE,
    ) {
        let id = compose(ms, w, q).unwrap();
        prop_assert!(id >= 0);
        prop_assert_eq!(decode(id), Ok(Parts { ms_since_epoch: ms, worker: w, sequence: q }));
        let unix = E + ms as i64;
        prop_assert!(min_id_at(unix, E).unwrap() <= id);
        prop_assert!(id <= max_id_at(unix, E).unwrap());
    }

    #[test]
    fn every_non_negative_i64_decodes_and_recomposes(id in 0i64..=i64::MAX) {
        let p = decode(id).unwrap();
        prop_assert_eq!(compose(p.ms_since_epoch, p.worker, p.sequence), Ok(id));
    }

    #[test]
    fn never_panics(
        now in any::<i64>(),
        epoch_ms in any::<i64>(),
        w in any::<u16>(),
        max_backward_ms in any::<u64>(),
        last_id in any::<i64>(),
        last_epoch_ms in any::<i64>(),
        issued in any::<u64>(),
    ) {
        // Arbitrary (even corrupt) state and inputs: results, never panics.
        let mut s = SnowflakeState {
            last_id, last_epoch_ms, issued, resumed: issued >> 1 & 1, lease_id: last_id,
        };
        let c = Config { epoch_ms, worker: w, max_backward_ms, lease_ms: issued % 3 };
        match s.next(now, &c) {
            Ok(Step::Issued(id)) => {
                prop_assert!(id >= 0);
                if issued != 0 || s.resumed != 0 {
                    prop_assert!(id > last_id);
                }
            }
            Ok(Step::ExtendLease(l)) => prop_assert!(l >= 0),
            _ => {}
        }
        let _ = decode(now);
        let _ = unix_ms(now, epoch_ms);
        let _ = min_id_at(now, epoch_ms);
        let _ = max_id_at(now, epoch_ms);
        let _ = compose(max_backward_ms, w, w);
    }
}

// Every field is checked when an id is assembled (moved here with `compose`, which only the
// tests use).
proptest! {
    #[test]
    fn snowflake_compose_checks_every_field(ms in prop_oneof![any::<u64>(), 0u64..=(1 << 41) + 2], worker in any::<u16>(), sequence in any::<u16>()) {
        let fits = ms < (1 << 41) && worker < 1024 && sequence < 4096;
        match compose(ms, worker, sequence) {
            Ok(id) => {
                prop_assert!(fits && id >= 0);
                let p = decode(id).unwrap();
                prop_assert_eq!((p.ms_since_epoch, p.worker, p.sequence), (ms, worker, sequence));
            }
            Err(_) => prop_assert!(!fits),
        }
        let w = i64::from(worker) - 1;
        prop_assert_eq!(checked_worker(w).is_ok(), (0..1024).contains(&w));
        let s = i64::from(sequence) - 1;
        prop_assert_eq!(checked_sequence(s).is_ok(), (0..4096).contains(&s));
    }
}
