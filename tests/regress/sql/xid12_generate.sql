-- xid12 generators, accessors, bounds and the machine id setting.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
SET timezone = 'UTC';

-- gen_xid12(): now, this machine, this backend, strictly increasing within the session.
SELECT abs(extract(epoch FROM xid12_time(x) - now())) < 5 AS time_is_now,
       xid12_machine(x) = xid12_current_machine() AS this_machine,
       xid12_pid(x) = pg_backend_pid() % 65536 AS this_backend,
       xid12_counter(x) = (get_byte(x::bytea, 9) << 16) + (get_byte(x::bytea, 10) << 8)
                          + get_byte(x::bytea, 11) AS counter_from_bytes,
       length(x::text) AS text_length
FROM (SELECT gen_xid12() AS x) s;
CREATE TEMP TABLE burst AS SELECT g, gen_xid12() AS x FROM generate_series(1, 100000) g;
SELECT count(*) FILTER (WHERE x <= prev) AS not_increasing, count(DISTINCT x) AS distinct_ids
FROM (SELECT x, lag(x) OVER (ORDER BY g) AS prev FROM burst) s;
-- Later statements continue above the earlier ones.
SELECT gen_xid12() > (SELECT max(x) FROM burst) AS still_increasing;

-- The default machine id is the first 3 bytes of md5(host name); a superuser may set one.
SELECT length(xid12_current_machine()) AS machine_bytes;
SHOW pg_idgen.machine_id;
SET pg_idgen.machine_id = 66051;
SELECT xid12_current_machine(), xid12_machine(gen_xid12());
SET pg_idgen.machine_id = 16777215;
SELECT xid12_machine(gen_xid12());
-- A lower machine id within the same second still gives a greater id: it borrows a second.
SELECT gen_xid12() AS before_change \gset
SET pg_idgen.machine_id = 0;
SELECT gen_xid12() > :'before_change'::xid12 AS increasing_across_machine_change,
       xid12_time(gen_xid12()) >= xid12_time(:'before_change'::xid12) AS time_not_behind;
SET pg_idgen.machine_id = 16777216;
SET pg_idgen.machine_id = -2;
RESET pg_idgen.machine_id;
SELECT xid12_current_machine() <> '\x010203' AS back_to_host_default;
-- Only a superuser may change it.
CREATE ROLE idgen_plain_user;
SET ROLE idgen_plain_user;
SET pg_idgen.machine_id = 5;
SELECT xid12_machine(gen_xid12()) = xid12_current_machine() AS plain_user_can_generate;
RESET ROLE;
DROP ROLE idgen_plain_user;

-- gen_xid12(timestamptz): the given second; ids of one backfill keep the timestamps' order.
SELECT xid12_time(gen_xid12('2024-07-01 12:34:56.789+00')) AS backfill_time;
SELECT count(*) FILTER (WHERE x <= prev) AS out_of_order
FROM (SELECT x, lag(x) OVER (ORDER BY ts) AS prev
      FROM (SELECT ts, gen_xid12(ts) AS x
            FROM generate_series(timestamptz '2020-01-01', '2020-01-02', '1 minute') ts) a) s;
SELECT xid12_time(gen_xid12('1970-01-01 00:00:00+00')), xid12_time(gen_xid12('2106-02-07 06:28:15+00'));
SELECT gen_xid12('1969-12-31 23:59:59+00');
SELECT gen_xid12('2106-02-07 06:28:16+00');
SELECT gen_xid12('infinity');
SELECT test_helpers.error_of($$SELECT gen_xid12('-infinity')$$);
SELECT gen_xid12(NULL) IS NULL AS strict;

-- Per-second bounds for range scans.
SELECT xid12_min('2024-07-01 00:00:00.999+00'), xid12_max('2024-07-01 00:00:00+00');
SELECT xid12_time(xid12_min('2024-07-01 10:00:00+00')), xid12_time(xid12_max('2024-07-01 10:00:00+00'));
SELECT xid12_min('2024-07-01') < gen_xid12('2024-07-01') AND gen_xid12('2024-07-01') < xid12_max('2024-07-01') AS bracketed;
SELECT test_helpers.error_of($$SELECT xid12_min('1960-01-01')$$);
SELECT test_helpers.error_of($$SELECT xid12_max('2200-01-01')$$);

-- From parts, and back.
SELECT xid12_from_parts('2011-03-22 17:50:19+00', '\x60f486', 58408, 4271561) AS rs_xid_example;
SELECT xid12_from_parts('1970-01-01+00', '\x000000', 0, 0), xid12_from_parts('2106-02-07 06:28:15+00', '\xffffff', 65535, 16777215);
SELECT xid12_from_parts('2024-01-01', '\x0102', 1, 1);
SELECT xid12_from_parts('2024-01-01', '\x01020304', 1, 1);
SELECT xid12_from_parts('2024-01-01', '\x010203', 65536, 1);
SELECT xid12_from_parts('2024-01-01', '\x010203', -1, 1);
SELECT xid12_from_parts('2024-01-01', '\x010203', 1, 16777216);
SELECT xid12_from_parts('2024-01-01', '\x010203', 1, -1);
SELECT xid12_from_parts('1969-12-31 23:59:59+00', '\x010203', 1, 1);
SELECT test_helpers.error_of($$SELECT xid12_from_parts('2024-01-01', '\x010203', 70000, 1)$$);
SELECT test_helpers.error_of($$SELECT xid12_from_parts('3000-01-01', '\x010203', 1, 1)$$);

-- Labels users rely on: volatility, strictness, parallel safety.
SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.proparallel
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idgen'
WHERE p.proname LIKE '%xid12%'
ORDER BY p.proname, p.oid::regprocedure::text;
