//! Bounds in time whose pass does not depend on the machine's speed (docs/DEVELOPMENT.md,
//! "Tests and time"): a fixed margin plus the scheduler's delay measured beside the call.
#![allow(dead_code)] // each test file uses its part

use std::time::{Duration, Instant};

/// A thread that sleeps `d` from its start; `lag()` joins it and says how much later than `d`
/// it woke: the machine's scheduling delay while the call beside it ran, in this run.
pub struct Beside(std::thread::JoinHandle<Duration>);

impl Beside {
    pub fn start(d: Duration) -> Self {
        Beside(std::thread::spawn(move || {
            let t = Instant::now();
            std::thread::sleep(d);
            t.elapsed().saturating_sub(d)
        }))
    }

    pub fn lag(self) -> Duration {
        self.0.join().unwrap()
    }
}

/// What never happens within this is a bug, not a slow machine: the cap of a wait for an event.
pub const GIVE_UP: Duration = Duration::from_secs(120);
