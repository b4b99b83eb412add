-- Edge devices (docs/formats.md §10, docs/registry.md): a grant of the 'edge'
-- pool with a window of weeks, the device's reports with their count, and a copy of a device's
-- state found at its report (23505), before its rows are merged.
SET timezone = 'UTC';
SET datestyle = ISO;
CREATE TEMP TABLE e AS SELECT * FROM idgen_acquire('xid12', 'edge-regress', '28 days', 'edge');
SELECT slot >= 12582912 AS edge_slot, hi - server_time BETWEEN interval '27 days 23:59:59' AND interval '28 days' AS four_weeks FROM e;

-- The first report presents count 0 and gets 1; the next presents 1 and gets 2.
SELECT idgen_report(grant_id, token, 'device-a', 0, lo + interval '1 hour') AS first FROM e;
SELECT idgen_report(grant_id, token, 'device-a', 1, lo + interval '2 hours') AS second FROM e;
SELECT device, syncs, last_id_time = e.lo + interval '2 hours' AS latest FROM idgen_registry_report JOIN e USING (grant_id);

-- A copy of device-a's state as it was after its first report (a cloned image) presents count 1
-- again: 23505, with both devices in the DETAIL.
CREATE FUNCTION pg_temp.report_error(stmt text) RETURNS TABLE (state text, message text, detail text) LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN QUERY SELECT 'ok', NULL::text, NULL::text;
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL;
    RETURN QUERY SELECT state, regexp_replace(message, '\d+', 'N'),
        regexp_replace(detail, '\d{4}-\d\d-\d\d [0-9:.]+\+00', 'T', 'g');
END $$;
SELECT r.* FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-b', 1, %L)$$,
    grant_id, token, lo + interval '3 hours')) r;
-- A count the registry never gave (the registry restored from a backup older than the report).
CREATE TEMP TABLE e2 AS SELECT * FROM idgen_acquire('xid12', 'edge-regress-2', '1 day', 'edge');
SELECT r.* FROM e2, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-c', 4)$$, grant_id, token)) r;
-- The rejected reports changed nothing.
SELECT device, syncs FROM idgen_registry_report JOIN e USING (grant_id);

-- An id outside the window (a clock before it, or after it): 55000.
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-a', 2, %L)$$,
    grant_id, token, lo - interval '1 day')) r;
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-a', 2, %L)$$,
    grant_id, token, hi)) r;
-- Bad arguments.
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-a', 2)$$, grant_id, token + 1)) r;
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, '', 2)$$, grant_id, token)) r;
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-a', -1)$$, grant_id, token)) r;
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, %L, 2)$$, grant_id, token, repeat('d', 257))) r;

-- A lost reply: device-a sends report 3 with attempt 7001; the server counts it, the device never
-- hears. Sent again (the same count 2 and attempt), it gets 3 again, and nothing is counted.
SELECT idgen_report(grant_id, token, 'device-a', 2, lo + interval '4 hours', 7001) AS third FROM e;
SELECT idgen_report(grant_id, token, 'device-a', 2, lo + interval '5 hours', 7001) AS third_again FROM e;
SELECT device, syncs, attempt, last_id_time = e.lo + interval '5 hours' AS latest FROM idgen_registry_report JOIN e USING (grant_id);
-- Count 2 with another attempt, or from another device with the same attempt: a copy, 23505.
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-a', 2, NULL, 7002)$$, grant_id, token)) r;
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-b', 2, NULL, 7001)$$, grant_id, token)) r;
SELECT r.state, r.message FROM e, pg_temp.report_error(format($$SELECT idgen_report(%s, %s, 'device-a', 2)$$, grant_id, token)) r;

-- Back at its sync the device reports, then releases what it did not use: the window ends just
-- after its last id, and the slot's later id-time is free.
SELECT idgen_report(grant_id, token, 'device-a', 3, lo + interval '5 hours') AS fourth FROM e;
SELECT r.hi = date_trunc('second', e.lo + interval '5 hours') + interval '1 second' AS ends_after_last_id
FROM e, idgen_release(e.grant_id, e.token, e.lo + interval '5 hours') r;
SELECT count(*) FROM e2, idgen_release(e2.grant_id, e2.token, '-infinity');
