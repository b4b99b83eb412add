//! In-database tests (`cargo pgrx test`) of glue that SQL cannot observe: the sort support
//! PostgreSQL's tuplesort drives, and the shared memory of a preloaded library.

#[pgrx::pg_schema]
mod tests {
    use crate::xid12::sortsupport::prepare;
    use crate::xid12::Xid12;
    use idgen_core::xid::Xid;
    use pgrx::pg_sys;
    use pgrx::prelude::*;

    fn sort_support(abbreviate: bool) -> pg_sys::SortSupportData {
        let mut ssup: pg_sys::SortSupportData = unsafe { std::mem::zeroed() };
        ssup.ssup_cxt = unsafe { pg_sys::CurrentMemoryContext };
        ssup.abbreviate = abbreviate;
        unsafe { prepare(&mut ssup) };
        ssup
    }

    fn datum(id: Xid) -> pg_sys::Datum {
        Xid12(id).to_datum()
    }

    fn id(time: u32, pid: u16, counter: u32) -> Xid {
        on_machine([1, 2, 3], time, pid, counter)
    }

    fn on_machine(machine: [u8; 3], time: u32, pid: u16, counter: u32) -> Xid {
        Xid::from_parts(time, machine, pid, counter).unwrap()
    }

    /// Feeds ids to the abbreviation and asks, as tuplesort does, whether to give up.
    fn gives_up(ids: impl Iterator<Item = Xid>) -> bool {
        let mut ssup = sort_support(true);
        let convert = ssup.abbrev_converter.unwrap();
        let mut rows = 0;
        for id in ids {
            unsafe { convert(datum(id), &mut ssup) };
            rows += 1;
        }
        unsafe { ssup.abbrev_abort.unwrap()(rows, &mut ssup) }
    }

    #[pg_test]
    fn abbreviation_is_kept_for_a_burst_of_one_process() {
        assert!(!gives_up((0..20_000).map(|c| id(1_700_000_000, 7, c))));
    }

    #[pg_test]
    fn abbreviation_is_kept_for_ids_spread_over_time() {
        assert!(!gives_up((0..20_000).map(|s| id(
            1_700_000_000 + s * 37,
            7,
            0
        ))));
    }

    #[pg_test]
    fn abbreviation_is_dropped_when_keys_collapse() {
        // After a first id from machine 9, ids of one second from machine 5 all share a key.
        let first = std::iter::once(on_machine([0, 0, 9], 1_700_000_000, 1, 1));
        let rest = (0..20_000).map(|c| on_machine([0, 0, 5], 1_700_000_000, (c % 500) as u16, c));
        assert!(gives_up(first.chain(rest)));
    }

    #[pg_test]
    fn abbreviated_order_never_contradicts_full_order() {
        let mut ssup = sort_support(true);
        let convert = ssup.abbrev_converter.unwrap();
        let abbreviated = ssup.comparator.unwrap();
        let full = ssup.abbrev_full_comparator.unwrap();
        let ids: Vec<Xid> = (0..400u32)
            .map(|i| {
                id(
                    1_700_000_000 + (i * 7919) % 5,
                    (i % 3) as u16 * 300,
                    (i * 104_729) % 16_777_216,
                )
            })
            .collect();
        for a in &ids {
            for b in &ids {
                let (da, db) = (datum(*a), datum(*b));
                let (ka, kb) = unsafe { (convert(da, &mut ssup), convert(db, &mut ssup)) };
                let by_key = unsafe { abbreviated(ka, kb, &mut ssup) }.signum();
                let by_value = unsafe { full(da, db, &mut ssup) }.signum();
                assert!(by_key == 0 || by_key == by_value, "{a:?} {b:?}");
                assert_eq!(by_value, a.cmp(b) as i32);
            }
        }
    }

    #[pg_test]
    fn plain_comparator_without_abbreviation() {
        let mut ssup = sort_support(false);
        assert!(ssup.abbrev_converter.is_none());
        let compare = ssup.comparator.unwrap();
        let (a, b) = (datum(id(5, 1, 2)), datum(id(5, 1, 3)));
        assert_eq!(
            unsafe {
                (
                    compare(a, b, &mut ssup),
                    compare(b, a, &mut ssup),
                    compare(a, a, &mut ssup),
                )
            },
            (-1, 1, 0)
        );
    }

    #[pg_test]
    fn gen_xid12_takes_the_shared_counter() {
        // Other tests take values from the same counter in parallel, so only the order is
        // known: the id's counter was taken after `before` and before `after`.
        assert!(crate::shmem::preloaded());
        let before = crate::shmem::next_xid_counter().unwrap();
        let taken = Spi::get_one::<i32>("SELECT xid12_counter(gen_xid12('2020-01-01'))")
            .unwrap()
            .unwrap() as u32;
        let after = crate::shmem::next_xid_counter().unwrap();
        let max = idgen_core::xid::MAX_COUNTER;
        let since_before = taken.wrapping_sub(before) & max;
        assert!(since_before >= 1 && since_before < (after.wrapping_sub(before) & max));
    }

    #[pg_test]
    fn generated_ids_increase_through_spi() {
        let ids: Vec<String> = (0..1000)
            .map(|_| {
                Spi::get_one::<String>("SELECT gen_xid12()::text")
                    .unwrap()
                    .unwrap()
            })
            .collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
    }

    /// PostgreSQL 15+: the Snowflake lease's WAL resource manager is registered when the
    /// library is preloaded, under the id and name docs/formats.md §7 gives.
    #[cfg(not(feature = "pg14"))]
    #[pg_test]
    fn snowflake_wal_resource_manager_is_registered() {
        let found = Spi::get_one::<bool>(
            "SELECT EXISTS (SELECT FROM pg_get_wal_resource_managers() \
             WHERE rm_id = 201 AND rm_name = 'pg_idgen' AND NOT rm_builtin)",
        )
        .unwrap();
        assert_eq!(found, Some(true));
    }
}
