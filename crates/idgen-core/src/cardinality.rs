//! A small HyperLogLog distinct-count estimator, for deciding when abbreviated sort keys
//! are worth keeping.

const REGISTER_BITS: u32 = 10;
const REGISTERS: usize = 1 << REGISTER_BITS;

#[derive(Clone)]
pub struct DistinctEstimator {
    registers: [u8; REGISTERS],
}

impl Default for DistinctEstimator {
    fn default() -> Self {
        DistinctEstimator {
            registers: [0; REGISTERS],
        }
    }
}

/// SplitMix64's finaliser: spreads any key's bits over all 64 bits.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl DistinctEstimator {
    pub fn add(&mut self, key: u64) {
        let hash = mix(key);
        let register = (hash >> (64 - REGISTER_BITS)) as usize;
        let rest = hash << REGISTER_BITS;
        let rank = (rest.leading_zeros() + 1).min(64 - REGISTER_BITS + 1) as u8;
        let slot = &mut self.registers[register];
        *slot = (*slot).max(rank);
    }

    pub fn estimate(&self) -> f64 {
        let m = REGISTERS as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self
            .registers
            .iter()
            .map(|&r| 2f64.powi(-i32::from(r)))
            .sum();
        let raw = alpha * m * m / sum;
        let empty = self.registers.iter().filter(|&&r| r == 0).count();
        if raw <= 2.5 * m && empty > 0 {
            // Linear counting is the better estimate while registers are still empty.
            m * (m / empty as f64).ln()
        } else {
            raw
        }
    }
}

/// Whether abbreviated sort keys still pay off, by the rule of PostgreSQL's
/// `uuid_abbrev_abort`: after 10,000 rows, give up when fewer than one key in 2,000 is
/// distinct; stop checking once 100,000 are distinct.
#[derive(Clone, Default)]
pub struct AbbreviationStats {
    keys_seen: i64,
    settled: bool,
    distinct: DistinctEstimator,
}

impl AbbreviationStats {
    pub fn add(&mut self, key: u64) {
        self.keys_seen += 1;
        if !self.settled {
            self.distinct.add(key);
        }
    }

    /// `rows`: the tuples the sort holds so far.
    pub fn should_abort(&mut self, rows: i64) -> bool {
        if rows < 10_000 || self.keys_seen < 10_000 || self.settled {
            return false;
        }
        let distinct = self.distinct.estimate();
        if distinct > 100_000.0 {
            self.settled = true;
            return false;
        }
        distinct < self.keys_seen as f64 / 2000.0 + 0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate_of(keys: impl Iterator<Item = u64>) -> f64 {
        let mut e = DistinctEstimator::default();
        keys.for_each(|k| e.add(k));
        e.estimate()
    }

    #[test]
    fn empty_and_repeated_keys() {
        assert_eq!(estimate_of(std::iter::empty()), 0.0);
        let one = estimate_of(std::iter::repeat_n(42, 100_000));
        assert!((0.5..1.5).contains(&one), "{one}");
    }

    #[test]
    fn estimates_within_ten_percent() {
        for n in [1_000u64, 20_000, 500_000] {
            // Sequential keys with a common high part, like ids of one second.
            let estimate = estimate_of((0..n).map(|i| (0x5f00_0000u64 << 32) | i));
            let error = (estimate - n as f64).abs() / n as f64;
            assert!(error < 0.1, "n={n} estimate={estimate}");
        }
    }

    #[test]
    fn abbreviation_kept_for_distinct_keys_and_dropped_for_repeats() {
        let mut spread = AbbreviationStats::default();
        let mut burst = AbbreviationStats::default();
        for i in 0..20_000u64 {
            spread.add(i << 32);
            burst.add(7 << 32);
        }
        assert!(!spread.should_abort(20_000));
        assert!(burst.should_abort(20_000));
        // Too early to judge.
        assert!(!AbbreviationStats::default().should_abort(20_000));
        // Once plainly distinct, the decision is settled and estimation stops.
        let mut many = AbbreviationStats::default();
        (0..200_000u64).for_each(|i| many.add(i));
        assert!(!many.should_abort(200_000));
        (0..200_000u64).for_each(|_| many.add(1));
        assert!(!many.should_abort(400_000));
    }
}
