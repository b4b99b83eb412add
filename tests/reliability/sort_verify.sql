-- The index built in parallel: amcheck, then a scan in index order against the byte order.
SELECT bt_index_parent_check('ids_id', heapallindexed => true);
VACUUM ids;
SET enable_seqscan = off;
SET enable_sort = off;
SET max_parallel_workers_per_gather = 0;
DO $$
DECLARE
    query text := $q$
        SELECT count(*) AS n,
               count(*) FILTER (WHERE xid12_send(prev) >= xid12_send(id)) AS bad
          FROM (SELECT id, lag(id) OVER (ORDER BY id) AS prev FROM ids) s$q$;
    plan text;
    r record;
BEGIN
    FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        IF plan ~ 'Sort' THEN
            RAISE EXCEPTION 'the plan sorts instead of reading the index: %', plan;
        END IF;
    END LOOP;
    EXECUTE query INTO r;
    IF r.n <> 2000000 OR r.bad <> 0 THEN
        RAISE EXCEPTION 'index order: % rows, % out of byte order', r.n, r.bad;
    END IF;
END
$$;
