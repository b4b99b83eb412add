//! The grant-bound generators' rules by hand, and one writer's properties across renewals
//! and new grants (I2, I4).

use super::*;
use crate::snowflake::{self, SnowflakeError, DEFAULT_EPOCH_MS};
use crate::xid::Xid;
use proptest::prelude::*;

const E: i64 = DEFAULT_EPOCH_MS;
const N: i64 = 1_700_000_000_000;
const T0: i64 = N - E;

fn sf(lo: i64, hi: i64, slot: i64) -> SnowflakeGrant {
    SnowflakeGrant::new(E, slot, Window::new(lo, hi), DEFAULT_MAX_WAIT_MS).unwrap()
}

fn issued<T: std::fmt::Debug>(step: Result<GrantStep<T>, GrantError>) -> T {
    match step {
        Ok(GrantStep::Issued(id)) => id,
        other => panic!("expected an id, got {other:?}"),
    }
}

#[test]
fn snowflake_rules() {
    let mut g = sf(T0, T0 + 1000, 5);
    // Before the window: a wait up to max_wait, then an error with its numbers.
    assert_eq!(g.next(N - 5000), Ok(GrantStep::WaitUntil(N)));
    assert_eq!(
        g.next(N - 5001),
        Err(GrantError::ClockBeforeWindow {
            behind_ms: 5001,
            window_start_unix_ms: N,
            max_wait_ms: 5000
        })
    );
    let id = issued(g.next(N));
    assert_eq!(snowflake::worker(id), Ok(5));
    assert_eq!(g.grant_last_id_time(), Some(T0));
    // At and after hi: renew, and nothing changes.
    assert_eq!(g.next(N + 1000), Ok(GrantStep::Renew));
    assert_eq!(g.last_id(), Some(id));
    assert_eq!(
        g.after_window(N + 1500),
        GrantError::ClockAfterWindow {
            ahead_ms: 500,
            window_end_unix_ms: N + 1000
        }
    );
    // A renewal keeps the slot and lo: the last id is still this grant's.
    g.rebind(5, Window::new(T0, T0 + 2000)).unwrap();
    assert_eq!(g.grant_last_id_time(), Some(T0));
    let id2 = issued(g.next(N + 1000));
    assert!(id2 > id);
    // A new grant of another slot: no id under it yet.
    g.rebind(2, Window::new(T0 + 500, T0 + 3000)).unwrap();
    assert_eq!(g.grant_last_id_time(), None);
    assert_eq!(g.last_id_time(), Some(T0 + 1000));
    // Same millisecond, lower slot: wait for the next one.
    assert_eq!(g.next(N + 1000), Ok(GrantStep::WaitUntil(N + 1001)));
    let id3 = issued(g.next(N + 1001));
    assert!(id3 > id2);
    assert_eq!(snowflake::worker(id3), Ok(2));
    assert_eq!(
        g.rebind(1024, Window::new(0, 1)),
        Err(GrantError::SlotOutOfRange {
            slot: 1024,
            max: 1023
        })
    );
    assert!(SnowflakeGrant::new(E, -1, Window::new(0, 1), 0).is_err());
    assert!(SnowflakeGrant::new(-1, 0, Window::new(0, 1), 0).is_err());
}

#[test]
fn snowflake_used_up_last_millisecond_renews() {
    let mut g = sf(T0 - 10, T0 + 1, 1);
    for _ in 0..4096 {
        issued(g.next(N));
    }
    assert_eq!(g.next(N), Ok(GrantStep::Renew));
    g.rebind(1, Window::new(T0 - 10, T0 + 10)).unwrap();
    assert_eq!(g.next(N), Ok(GrantStep::WaitUntil(N + 1)));
    // A step back of up to max_wait waits for the mark; beyond is the plain error.
    assert_eq!(g.next(N - 5), Ok(GrantStep::WaitUntil(N + 1)));
    let mut far = sf(T0 - 10_000, T0 + 10_000, 1);
    issued(far.next(N));
    assert!(matches!(
        far.next(N - 5001),
        Err(GrantError::Snowflake(SnowflakeError::ClockMovedBack {
            behind_ms: 5001,
            limit_ms: 5000
        }))
    ));
}

#[test]
fn xid_rules() {
    let s = 1_700_000_000;
    let mut g = XidGrant::new(0x0a0b0c, Window::new(s, s + 2), 5).unwrap();
    assert_eq!(g.next(s - 5, 1, 0), Ok(GrantStep::WaitUntil(s)));
    assert_eq!(
        g.next(s - 6, 1, 0),
        Err(GrantError::ClockBeforeWindow {
            behind_ms: 6000,
            window_start_unix_ms: s * 1000,
            max_wait_ms: 5000
        })
    );
    let a = issued(g.next(s, 1, 0xffffff));
    assert_eq!(a.machine(), [0x0a, 0x0b, 0x0c]);
    // A counter wrap borrows the next second (inside), then the one after (outside).
    let b = issued(g.next(s, 1, 0));
    assert_eq!(i64::from(b.time()), s + 1);
    assert_eq!(g.grant_last_id_time(), Some(s + 1));
    issued(g.next(s, 1, 0xffffff));
    assert_eq!(g.next(s, 1, 0), Ok(GrantStep::Renew));
    assert_eq!(g.next(s + 2, 1, 1), Ok(GrantStep::Renew));
    assert_eq!(
        g.after_window(s + 3),
        GrantError::ClockAfterWindow {
            ahead_ms: 1000,
            window_end_unix_ms: (s + 2) * 1000
        }
    );
    assert!(XidGrant::new(1 << 24, Window::new(0, 1), 5).is_err());
    assert!(XidGrant::new(-1, Window::new(0, 1), 5).is_err());
}

/// A clock change, a call or a rebind, for the single-writer properties.
#[derive(Clone, Debug)]
enum Op {
    Clock(i64),
    Next(u32),
    Renew(i64),
    NewGrant { slot: i64, back: i64, len: i64 },
}

fn ops(step: i64, max_slot: i64) -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            3 => (-step..step).prop_map(Op::Clock),
            6 => any::<u32>().prop_map(Op::Next),
            1 => (1..step).prop_map(Op::Renew),
            1 => (0..=max_slot, 0..step, 1..step).prop_map(|(slot, back, len)| Op::NewGrant { slot, back, len }),
        ],
        1..300,
    )
}

proptest! {
    /// Every id has the bound slot and an id-time inside the bound window, and is above
    /// every id before it, across renewals and new grants (I2, I4).
    #[test]
    fn snowflake_ids_stay_inside(ops in ops(8000, 1023), slot in 0i64..1024) {
        let mut now = N;
        let mut window = Window::new(T0 - 5000, T0 + 4000);
        let mut g = SnowflakeGrant::new(E, slot, window, 5000).unwrap();
        let mut slot = slot;
        let mut last = -1i64;
        for op in ops {
            match op {
                Op::Clock(d) => now += d,
                Op::Next(_) => if let Ok(GrantStep::Issued(id)) = g.next(now) {
                    let p = snowflake::decode(id).unwrap();
                    prop_assert_eq!(i64::from(p.worker), slot);
                    prop_assert!(window.contains(p.ms_since_epoch as i64));
                    prop_assert!(id > last);
                    prop_assert_eq!(g.grant_last_id_time(), Some(p.ms_since_epoch as i64));
                    last = id;
                },
                Op::Renew(d) => {
                    window.hi += d;
                    g.rebind(slot, window).unwrap();
                }
                Op::NewGrant { slot: s, back, len } => {
                    let t = now - E;
                    window = Window::new(t - back, t + len);
                    slot = s;
                    g.rebind(slot, window).unwrap();
                }
            }
        }
    }

    #[test]
    fn xid_ids_stay_inside(ops in ops(8, 0xffffff), slot in 0i64..=0xffffff, pid: u16) {
        let mut now = 1_700_000_000i64;
        let mut window = Window::new(now - 5, now + 4);
        let mut g = XidGrant::new(slot, window, 5).unwrap();
        let mut slot = slot;
        let mut last: Option<Xid> = None;
        let mut counter = crate::xid::LocalCounter::starting_at(0xfffff0);
        for op in ops {
            match op {
                Op::Clock(d) => now += d,
                Op::Next(c) => {
                    // Mostly consecutive counter values, sometimes a jump (a wrap).
                    let c = if c % 7 == 0 { c } else { counter.take() };
                    if let Ok(GrantStep::Issued(id)) = g.next(now, pid, c) {
                        let [a, b, m] = id.machine();
                        prop_assert_eq!(i64::from(u32::from_be_bytes([0, a, b, m])), slot);
                        prop_assert!(window.contains(id.time().into()));
                        prop_assert!(last.is_none_or(|l| id > l));
                        prop_assert_eq!(g.grant_last_id_time(), Some(i64::from(id.time())));
                        last = Some(id);
                    }
                }
                Op::Renew(d) => {
                    window.hi += d;
                    g.rebind(slot, window).unwrap();
                }
                Op::NewGrant { slot: s, back, len } => {
                    window = Window::new(now - back, now + len);
                    slot = s;
                    g.rebind(slot, window).unwrap();
                }
            }
        }
    }
}
