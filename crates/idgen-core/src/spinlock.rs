//! A spinlock that can live in memory shared between processes: a flag and the value, with no
//! pointers and no system calls. For sections of a few instructions of plain Rust only (no
//! I/O, no allocation, nothing that can fail), as PostgreSQL's own spinlocks are.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A value behind a spinlock: taking it is a compare-exchange on a flag.
#[repr(C)]
pub struct SpinLocked<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}

// The value is reached only through the lock.
unsafe impl<T: Send> Sync for SpinLocked<T> {}

impl<T> SpinLocked<T> {
    pub const fn new(value: T) -> Self {
        SpinLocked {
            locked: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    pub fn lock(&self) -> SpinGuard<'_, T> {
        let mut spins = 0u32;
        while !self.try_acquire() {
            spins += 1;
            if spins.is_multiple_of(128) {
                // The holder may have been descheduled: give it the CPU.
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        SpinGuard { owner: self }
    }

    /// The lock if it is free now, without waiting.
    pub fn try_lock(&self) -> Option<SpinGuard<'_, T>> {
        self.try_acquire().then_some(SpinGuard { owner: self })
    }

    fn try_acquire(&self) -> bool {
        !self.locked.load(Ordering::Relaxed)
            && self
                .locked
                .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }
}

pub struct SpinGuard<'a, T> {
    owner: &'a SpinLocked<T>,
}

impl<T> Deref for SpinGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        unsafe { &*self.owner.value.get() }
    }
}

impl<T> DerefMut for SpinGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        unsafe { &mut *self.owner.value.get() }
    }
}

impl<T> Drop for SpinGuard<'_, T> {
    fn drop(&mut self) {
        self.owner.locked.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn threads_never_lose_an_update() {
        let counter = Arc::new(SpinLocked::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let counter = Arc::clone(&counter);
                std::thread::spawn(move || {
                    for _ in 0..100_000 {
                        *counter.lock() += 1;
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(*counter.lock(), 400_000);
    }

    #[test]
    fn try_lock_fails_while_held_and_succeeds_after() {
        let value = SpinLocked::new(7);
        let guard = value.lock();
        assert!(value.try_lock().is_none());
        drop(guard);
        assert_eq!(value.try_lock().map(|g| *g), Some(7));
    }
}
