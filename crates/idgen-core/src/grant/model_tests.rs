//! I3: a simulated registry and writers with their own clocks.

use super::*;
use crate::snowflake::{self, DEFAULT_EPOCH_MS};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};

const E: i64 = DEFAULT_EPOCH_MS;
const N: i64 = 1_700_000_000_000;

/// A grant in the simulated registry, in id-time units.
#[derive(Clone, Debug)]
struct SimGrant {
    writer: usize,
    slot: i64,
    lo: i64,
    hi: i64,
    released: bool,
}

/// The registry as the server keeps it: lo = max(server - backdate, the slot's last hi),
/// hi = server + lease; a renewal only while no one continued the slot; a release moves hi
/// back to just after the last id.
struct Registry {
    slots: i64,
    backdate: i64,
    grants: Vec<SimGrant>,
}

impl Registry {
    fn last_hi(&self, slot: i64) -> i64 {
        self.grants
            .iter()
            .filter(|g| g.slot == slot)
            .map(|g| g.hi)
            .max()
            .unwrap_or(i64::MIN)
    }

    fn acquire(&mut self, writer: usize, server: i64, lease: i64, pick: usize) -> Option<usize> {
        let free: Vec<i64> = (0..self.slots)
            .filter(|s| self.last_hi(*s) <= server)
            .collect();
        if free.is_empty() {
            return None;
        }
        let slot = free[pick % free.len()];
        let lo = (server - self.backdate).max(self.last_hi(slot));
        self.grants.push(SimGrant {
            writer,
            slot,
            lo,
            hi: server + lease,
            released: false,
        });
        Some(self.grants.len() - 1)
    }

    fn renew(&mut self, grant: usize, server: i64, lease: i64) -> Option<i64> {
        let g = &self.grants[grant];
        if g.released || self.last_hi(g.slot) != g.hi {
            return None; // 55000 grant lost
        }
        let hi = g.hi.max(server + lease);
        self.grants[grant].hi = hi;
        Some(hi)
    }

    fn release(&mut self, grant: usize, last: Option<i64>) {
        let g = &mut self.grants[grant];
        let hi = match last {
            Some(t) => (t + 1).clamp(g.lo, g.hi),
            None => g.lo,
        };
        g.hi = g.hi.min(hi.max(g.lo));
        g.released = true;
    }

    /// The grant that covers id-time `t` of `slot`, if any.
    fn writer_of(&self, slot: i64, t: i64) -> Vec<usize> {
        self.grants
            .iter()
            .filter(|g| g.slot == slot && g.lo <= t && t < g.hi)
            .map(|g| g.writer)
            .collect()
    }
}

/// Either kind behind one face for the simulation: clocks in ms, ids as u128, id-time in
/// the kind's unit.
trait Sim: Sized {
    /// id-time units per ms divisor: 1 (Snowflake) or 1000 (xid12).
    const UNIT: i64;
    fn start(slot: i64, window: Window) -> Self;
    fn next(
        &mut self,
        clock_ms: i64,
        pid: u16,
        counter: u32,
    ) -> Result<GrantStep<u128>, GrantError>;
    fn rebind(&mut self, slot: i64, window: Window);
    fn grant_last(&self) -> Option<i64>;
    /// (slot, id-time) of an id.
    fn parts(id: u128) -> (i64, i64);
    /// Server id-time at server clock `ms`.
    fn id_time(ms: i64) -> i64;
}

impl Sim for SnowflakeGrant {
    const UNIT: i64 = 1;
    fn start(slot: i64, window: Window) -> Self {
        SnowflakeGrant::new(E, slot, window, DEFAULT_MAX_WAIT_MS).unwrap()
    }
    fn next(&mut self, clock_ms: i64, _: u16, _: u32) -> Result<GrantStep<u128>, GrantError> {
        SnowflakeGrant::next(self, clock_ms).map(|s| match s {
            GrantStep::Issued(id) => GrantStep::Issued(id as u128),
            GrantStep::WaitUntil(t) => GrantStep::WaitUntil(t),
            GrantStep::Renew => GrantStep::Renew,
        })
    }
    fn rebind(&mut self, slot: i64, window: Window) {
        SnowflakeGrant::rebind(self, slot, window).unwrap()
    }
    fn grant_last(&self) -> Option<i64> {
        self.grant_last_id_time()
    }
    fn parts(id: u128) -> (i64, i64) {
        let p = snowflake::decode(id as i64).unwrap();
        (p.worker.into(), p.ms_since_epoch as i64)
    }
    fn id_time(ms: i64) -> i64 {
        ms - E
    }
}

impl Sim for XidGrant {
    const UNIT: i64 = 1000;
    fn start(slot: i64, window: Window) -> Self {
        XidGrant::new(slot, window, DEFAULT_MAX_WAIT_S).unwrap()
    }
    fn next(
        &mut self,
        clock_ms: i64,
        pid: u16,
        counter: u32,
    ) -> Result<GrantStep<u128>, GrantError> {
        XidGrant::next(self, clock_ms.div_euclid(1000), pid, counter).map(|s| match s {
            GrantStep::Issued(id) => {
                GrantStep::Issued(id.0.iter().fold(0u128, |n, b| n << 8 | u128::from(*b)))
            }
            GrantStep::WaitUntil(t) => GrantStep::WaitUntil(t),
            GrantStep::Renew => GrantStep::Renew,
        })
    }
    fn rebind(&mut self, slot: i64, window: Window) {
        XidGrant::rebind(self, slot, window).unwrap()
    }
    fn grant_last(&self) -> Option<i64> {
        self.grant_last_id_time()
    }
    fn parts(id: u128) -> (i64, i64) {
        (((id >> 40) & 0xff_ffff) as i64, (id >> 64) as i64)
    }
    fn id_time(ms: i64) -> i64 {
        ms.div_euclid(1000)
    }
}

/// One event of the simulation.
#[derive(Clone, Debug)]
enum Event {
    /// The server's clock (and every writer's) moves on by this many ms.
    Tick(i64),
    /// A writer's clock steps by this many ms (back or forward), within ± a lease of the
    /// server's.
    Step(usize, i64),
    /// A writer reads its clock now and uses the reading at its next `Make` (a pause between
    /// the reading and the id).
    Read(usize),
    /// A writer makes up to this many ids, renewing or acquiring when told to.
    Make(usize, u8),
    /// A background renewal; `true`: its reply is lost (the registry renewed, the writer
    /// does not know).
    Renew(usize, bool),
    /// The writer releases its grant with its last id-time, then acquires a new one later.
    Release(usize),
    /// The writer's process dies (kill -9) and starts again: no release, a fresh generator.
    Crash(usize),
}

struct Writer<G> {
    offset: i64,
    reading: Option<i64>,
    generator: Option<G>,
    grant: Option<usize>,
    counter: u32,
}

fn events(writers: usize, lease_ms: i64) -> impl Strategy<Value = Vec<Event>> {
    let w = 0..writers;
    prop::collection::vec(
        prop_oneof![
            4 => (0..lease_ms / 2).prop_map(Event::Tick),
            2 => (w.clone(), -lease_ms..lease_ms).prop_map(|(w, d)| Event::Step(w, d)),
            1 => w.clone().prop_map(Event::Read),
            8 => (w.clone(), 1u8..40).prop_map(|(w, n)| Event::Make(w, n)),
            2 => (w.clone(), any::<bool>()).prop_map(|(w, lost)| Event::Renew(w, lost)),
            1 => w.clone().prop_map(Event::Release),
            1 => w.prop_map(Event::Crash),
        ],
        1..400,
    )
}

/// Runs a schedule; fails on a duplicate id, an id its writer's grant does not cover, or
/// an id the registry attributes to another writer. Returns the number of ids made.
fn simulate<G: Sim>(
    slots: i64,
    lease_ms: i64,
    offsets: &[i64],
    events: &[Event],
    seed: usize,
) -> Result<usize, TestCaseError> {
    let lease = lease_ms / G::UNIT;
    let mut reg = Registry {
        slots,
        backdate: 5000 / G::UNIT,
        grants: Vec::new(),
    };
    let mut server_ms = N;
    let mut writers: Vec<Writer<G>> = offsets
        .iter()
        .map(|o| Writer {
            offset: *o,
            reading: None,
            generator: None,
            grant: None,
            counter: 0,
        })
        .collect();
    let mut ids: HashMap<u128, usize> = HashMap::new();
    let mut pick = seed;
    // Every writer has the same pid and counter start: ids differ only by slot and time.
    let pid = 1u16;
    for event in events {
        pick = pick
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        match *event {
            Event::Tick(ms) => server_ms += ms,
            Event::Step(w, d) => {
                writers[w].offset = (writers[w].offset + d).clamp(-lease_ms, lease_ms);
            }
            Event::Read(w) => writers[w].reading = Some(server_ms + writers[w].offset),
            Event::Renew(w, lost) => {
                if let Some(g) = writers[w].grant {
                    match reg.renew(g, G::id_time(server_ms), lease) {
                        Some(hi) if !lost => {
                            let gr = &reg.grants[g];
                            let window = Window::new(gr.lo, hi);
                            let slot = gr.slot;
                            if let Some(gen) = writers[w].generator.as_mut() {
                                gen.rebind(slot, window);
                            }
                        }
                        Some(_) => {}
                        None => writers[w].grant = None,
                    }
                }
            }
            Event::Release(w) => {
                if let (Some(g), Some(gen)) = (writers[w].grant, writers[w].generator.as_ref()) {
                    reg.release(g, gen.grant_last());
                    writers[w].grant = None;
                }
            }
            Event::Crash(w) => {
                writers[w].generator = None;
                writers[w].grant = None;
                writers[w].counter = 0;
            }
            Event::Make(w, count) => {
                let clock = writers[w]
                    .reading
                    .take()
                    .unwrap_or(server_ms + writers[w].offset);
                let mut renewals = 0;
                let mut made = 0;
                while made < count && renewals < 3 {
                    let writer = &mut writers[w];
                    if writer.grant.is_none() {
                        let Some(g) = reg.acquire(w, G::id_time(server_ms), lease, pick) else {
                            break;
                        };
                        let gr = &reg.grants[g];
                        let window = Window::new(gr.lo, gr.hi);
                        match writer.generator.as_mut() {
                            Some(gen) => gen.rebind(gr.slot, window),
                            None => writer.generator = Some(G::start(gr.slot, window)),
                        }
                        writer.grant = Some(g);
                    }
                    let gen = writer.generator.as_mut().unwrap();
                    let counter = writer.counter;
                    match gen.next(clock, pid, counter) {
                        Ok(GrantStep::Issued(id)) => {
                            writer.counter = (counter + 1) & 0xff_ffff;
                            made += 1;
                            let (slot, t) = G::parts(id);
                            let gr = &reg.grants[writer.grant.unwrap()];
                            prop_assert_eq!(slot, gr.slot);
                            prop_assert!(
                                gr.lo <= t && t < gr.hi,
                                "id-time {} outside [{}, {})",
                                t,
                                gr.lo,
                                gr.hi
                            );
                            if let Some(other) = ids.insert(id, w) {
                                return Err(TestCaseError::fail(format!(
                                    "duplicate id {id:#x}: writers {other} and {w}"
                                )));
                            }
                        }
                        Ok(GrantStep::WaitUntil(_)) | Err(_) => break,
                        Ok(GrantStep::Renew) => {
                            renewals += 1;
                            let g = writer.grant.unwrap();
                            match reg.renew(g, G::id_time(server_ms), lease) {
                                Some(hi) => {
                                    let gr = &reg.grants[g];
                                    gen.rebind(gr.slot, Window::new(gr.lo, hi));
                                }
                                None => writer.grant = None,
                            }
                        }
                    }
                }
            }
        }
    }
    // Provenance after every release: each id is covered by exactly one grant, its
    // writer's.
    for (id, w) in &ids {
        let (slot, t) = G::parts(*id);
        prop_assert_eq!(reg.writer_of(slot, t), vec![*w]);
    }
    // The registry's own invariant: the windows of one slot are disjoint.
    let mut seen: HashSet<(i64, i64)> = HashSet::new();
    for g in &reg.grants {
        for t in g.lo..g.hi.min(g.lo + 2000) {
            prop_assert!(seen.insert((g.slot, t)));
        }
    }
    Ok(ids.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// I3: no duplicate across writers with their own clocks (offsets up to ± a lease,
    /// steps back and forth, pauses between reading the clock and making the id, lost
    /// renewal replies, releases, crashes), with few slots so they are reused.
    #[test]
    fn snowflake_writers_never_collide(
        slots in 1i64..4,
        lease in 500i64..8000,
        offsets in prop::collection::vec(-8000i64..8000, 2..6),
        events in events(6, 8000),
        seed: usize,
    ) {
        let offsets: Vec<i64> = offsets.iter().map(|o| (*o).clamp(-lease, lease)).collect();
        let events: Vec<Event> = events.into_iter().filter(|e| writer(e) < offsets.len()).collect();
        simulate::<SnowflakeGrant>(slots, lease, &offsets, &events, seed)?;
    }

    #[test]
    fn xid_writers_never_collide(
        slots in 1i64..4,
        lease_s in 1i64..20,
        offsets in prop::collection::vec(-20_000i64..20_000, 2..6),
        events in events(6, 20_000),
        seed: usize,
    ) {
        let lease = lease_s * 1000;
        let offsets: Vec<i64> = offsets.iter().map(|o| (*o).clamp(-lease, lease)).collect();
        let events: Vec<Event> = events.into_iter().filter(|e| writer(e) < offsets.len()).collect();
        simulate::<XidGrant>(slots, lease, &offsets, &events, seed)?;
    }
}

fn writer(e: &Event) -> usize {
    match *e {
        Event::Tick(_) => 0,
        Event::Step(w, _)
        | Event::Read(w)
        | Event::Make(w, _)
        | Event::Renew(w, _)
        | Event::Release(w)
        | Event::Crash(w) => w,
    }
}

/// The simulation makes ids at all (a model that refuses everything proves nothing).
#[test]
fn simulation_makes_ids() {
    let offsets = [0, 300, -300];
    let mut events = Vec::new();
    for i in 0..200 {
        events.push(Event::Make(i % 3, 20));
        events.push(Event::Tick(400));
        if i % 17 == 0 {
            events.push(Event::Release(i % 3));
        }
    }
    let made = simulate::<SnowflakeGrant>(2, 2000, &offsets, &events, 7).unwrap();
    assert!(made > 2000, "{made}");
    let made = simulate::<XidGrant>(2, 5000, &offsets, &events, 7).unwrap();
    assert!(made > 1000, "{made}");
}
