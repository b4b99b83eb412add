-- The writer registry: grants of Snowflake worker ids and xid12 machine ids for windows of
-- id-time, renewals, releases, reservations, provenance and the errors (SPEC §8).
SET timezone = 'UTC';
-- CREATE EXTENSION recorded where the registry began (this cluster and timeline, no reason),
-- before any registry call, and fenced nothing: it had no history.
SELECT count(*) AS origins, bool_or(fenced) AS fenced, every(reason IS NULL) AS began_here,
       every((o.system_identifier, o.timeline) = (s.system_identifier,
             ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint)) AS this_origin
FROM idgen_registry_origin o, pg_control_system() s;
-- Its xid12 stripe: the one it grants machine ids from.
SELECT xid12_stripe BETWEEN 0 AND 63 AS has_stripe, xid12_stripe = idgen_registry_current_stripe() AS current
FROM idgen_registry_origin;
CREATE TEMP TABLE g AS SELECT * FROM idgen_acquire('snowflake', 'regress-a', '1 minute');
-- The integer id-time is the window's, in milliseconds since the epoch.
SELECT lo_t = (extract(epoch FROM lo) * 1000)::bigint - epoch_ms AS lo_t_ok,
       hi_t = (extract(epoch FROM hi) * 1000)::bigint - epoch_ms AS hi_t_ok,
       server_t = floor(extract(epoch FROM server_time) * 1000)::bigint - epoch_ms AS server_t_ok
FROM g;
-- One row; a window from 5 s before the server's clock (rounded down to a whole millisecond) to
-- one lease after it, in whole milliseconds of the server's epoch.
SELECT kind, slot BETWEEN 0 AND 1023 AS slot_ok, token IS NOT NULL AS has_token,
       epoch_ms = current_setting('pg_idgen.snowflake_epoch')::bigint AS server_epoch,
       server_time - lo BETWEEN interval '5 s' AND interval '5.001 s' AS lo_ok,
       hi - server_time BETWEEN interval '59.999 s' AND interval '1 minute' AS hi_ok,
       date_trunc('milliseconds', lo) = lo AND date_trunc('milliseconds', hi) = hi AS whole_ms
FROM g;
-- The view shows it; the token is not kept (only its SHA-256).
SELECT v.writer, v.kind, v.pool, v.lo = g.lo AND v.hi = g.hi AS same_window, v.released_at IS NULL AS live
FROM idgen_grants v JOIN g USING (grant_id);
SELECT count(*) AS columns_named_token FROM pg_attribute
WHERE attrelid IN ('idgen_registry_grant'::regclass, 'idgen_registry_slot'::regclass) AND attname = 'token';

-- Renew: the same grant and slot, a later end.
SELECT r.grant_id = g.grant_id AND r.slot = g.slot AND r.lo = g.lo AS same_grant, r.hi >= g.hi AS later_end,
       r.hi - r.server_time BETWEEN interval '1 min 59.999 s' AND interval '2 min' AS new_lease
FROM g, idgen_renew(g.grant_id, g.token, '2 minutes') r;
-- No lease asked for: the pool's default for the kind, 10 minutes at most its longest (the app
-- pool's Snowflake grants: 3 minutes; its xid12 grants: 1 hour). Longer is IG004.
CREATE TEMP TABLE d AS SELECT * FROM idgen_acquire('snowflake', 'regress-default-lease');
SELECT hi_t - server_t = 180000 AS snowflake_default, hi - server_time BETWEEN interval '2 min 59.999 s' AND interval '3 min' AS ok
FROM d;
SELECT r.hi = r.lo AS released_unused FROM d, idgen_release(d.grant_id, d.token, '-infinity') r;
SELECT hi_t - server_t = 600 AS xid12_default FROM idgen_acquire('xid12', 'regress-default-lease');
-- A renewal without a lease keeps the grant's own (1 minute: the window stays where the
-- 2-minute renewal put it), not the pool's default.
SELECT r.hi - r.server_time BETWEEN interval '1 min' AND interval '2 min' AS own_lease
FROM g, idgen_renew(g.grant_id, g.token) r;
SELECT test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'w', '4 minutes')$$);
SELECT kind FROM idgen_acquire('xid12', 'regress-long', '1 hour');
-- A wrong token is 42501; an unknown grant 42704.
SELECT regexp_replace(test_helpers.error_of(format('SELECT idgen_renew(%s, %s)', grant_id, token + 1)), '\d+$', 'N') FROM g;
SELECT test_helpers.error_of('SELECT idgen_renew(-1, 0)');

-- Provenance: the writer of an id made in the window; none for one made outside it.
SELECT w.writer, w.slot = g.slot AS its_slot
FROM g, idgen_writer_of(((extract(epoch FROM g.lo + interval '1 s') * 1000)::bigint - g.epoch_ms) << 22
                        | (g.slot::bigint << 12) | 17) w;
SELECT count(*) AS writers_of_an_id_before_the_window
FROM g, idgen_writer_of(((extract(epoch FROM g.lo - interval '1 s') * 1000)::bigint - g.epoch_ms) << 22
                        | (g.slot::bigint << 12) | 17);
SELECT count(*) AS writers_of_a_negative_id FROM idgen_writer_of(-5::bigint);

-- Release with the time of the last id made: the window ends just after it, and the slot's
-- later id-time is free at once. Renewing a released grant is 55000.
SELECT r.hi = g.lo + interval '2.001 s' AS ends_after_last_id, r.hi <= r.server_time AS over
FROM g, idgen_release(g.grant_id, g.token, g.lo + interval '2.0004 s') r;
SELECT v.released_at IS NOT NULL AS released FROM idgen_grants v JOIN g USING (grant_id);
SELECT regexp_replace(test_helpers.error_of(format('SELECT idgen_renew(%s, %s)', grant_id, token)), 'grant \d+ was released at .*', 'grant N was released at …') FROM g;
-- Releasing again changes nothing.
SELECT r.hi = g.lo + interval '2.001 s' AS unchanged FROM g, idgen_release(g.grant_id, g.token, NULL) r;

-- Reservations: for good (hi is infinity), never granted, idempotent for the same writer, an
-- error for another. The server's own worker id is reserved by the first acquire when set.
SELECT idgen_reserve('snowflake', 1000, 'hand-configured') = idgen_reserve('snowflake', 1000, 'hand-configured') AS idempotent;
SELECT writer, lo, hi, reserved FROM idgen_grants WHERE kind = 'snowflake' AND slot = 1000;
SELECT test_helpers.error_of($$SELECT idgen_reserve('snowflake', 1000, 'someone else')$$);
SELECT w.writer FROM idgen_writer_of((123456789::bigint << 22) | (1000 << 12)) w;

-- A slot that a live grant holds cannot be reserved (55006).
CREATE TEMP TABLE x AS SELECT * FROM idgen_acquire('xid12', 'regress-x', '1 minute');
SELECT kind, slot BETWEEN 0 AND 16777215 AS slot_ok, epoch_ms IS NULL AS no_epoch,
       date_trunc('seconds', lo) = lo AND date_trunc('seconds', hi) = hi AS whole_seconds FROM x;
SELECT regexp_replace(test_helpers.error_of(format($$SELECT idgen_reserve('xid12', %s, 'late')$$, slot)),
                      'slot \d+ (.*) until .*', 'slot … \1 until …') FROM x;
-- xid12 provenance, for an id made in the window by this machine id.
SELECT w.writer FROM x, idgen_writer_of(xid12_from_parts(x.lo + interval '3 s',
    substr(int4send(x.slot), 2, 3), 1, 1)) w;

-- idgen_verify: the ids of a column that no grant or reservation covers, and why.
CREATE TEMP TABLE merged (id bigint);
INSERT INTO merged SELECT (123456789::bigint << 22) | (1000 << 12) | 1;            -- reserved slot
INSERT INTO merged SELECT (123456789::bigint << 22) | (999 << 12) | 1;             -- never granted
INSERT INTO merged SELECT ((extract(epoch FROM lo - interval '1 s') * 1000)::bigint - epoch_ms) << 22
                          | (slot::bigint << 12) FROM g;                           -- before its window
INSERT INTO merged VALUES (-1), (NULL);
SELECT * FROM (SELECT regexp_replace(id, '^\d{10,}$', 'ID') AS id,
                      regexp_replace(reason, 'worker \d+ at .*: no', 'worker … at …: no') AS reason
               FROM idgen_verify('merged', 'id')) v ORDER BY reason;
SELECT test_helpers.error_of($$SELECT * FROM idgen_verify('merged', 'nope')$$);
CREATE TEMP TABLE wrong_type (id text);
SELECT test_helpers.error_of($$SELECT * FROM idgen_verify('wrong_type', 'id')$$);

-- Pools: a longer lease than the pool allows is an error; a row of idgen_registry_pool
-- overrides a pool's slots and longest lease.
SELECT test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'w', '2 hours')$$);
INSERT INTO idgen_registry_pool VALUES ('batch', int4range(5, 6), int4range(5, 6), '1 day');
SELECT slot FROM idgen_acquire('xid12', 'batch-job', '2 hours', 'batch');
SELECT regexp_replace(test_helpers.error_of($$SELECT idgen_acquire('xid12', 'batch-job-2', '2 hours', 'batch')$$), 'ends at .*', 'ends at …');
DELETE FROM idgen_registry_pool WHERE pool = 'batch';

-- A new timeline or cluster fences the registry: as if this database had lived on timeline 999
-- until a second ago, granting xid12 machine ids from the stripe of the grants below. New
-- Snowflake grants wait until the lost ones must have ended (the app pool's longest Snowflake
-- lease, 3 minutes, and 1 minute for the clocks); new xid12 grants come at once from another
-- stripe, which no lost grant can hold; a grant that had ended before the fence is not
-- continued; live grants renew; an operator may lift it.
CREATE TEMP TABLE old_grant AS SELECT * FROM idgen_acquire('xid12', 'before-failover', '1 minute');
UPDATE idgen_registry_grant SET hi = lo + 1, granted_at = granted_at - interval '10 s'
    WHERE grant_id = (SELECT grant_id FROM old_grant);
UPDATE idgen_registry_slot SET next_free = (SELECT hi FROM idgen_registry_grant WHERE grant_id = (SELECT grant_id FROM old_grant))
    WHERE kind = 'xid12' AND slot = (SELECT slot FROM old_grant);
CREATE TEMP TABLE live_grant AS SELECT * FROM idgen_acquire('xid12', 'live-at-failover', '1 minute');
CREATE TEMP TABLE live_snowflake AS SELECT * FROM idgen_acquire('snowflake', 'live-at-failover', '1 minute');
SELECT l.slot % 64 = o.slot % 64 AS one_stripe FROM live_grant l, old_grant o;
INSERT INTO idgen_registry_origin (system_identifier, timeline, seen_at, fenced, reason, xid12_stripe)
    SELECT system_identifier, 999, clock_timestamp(), false, NULL, (SELECT slot % 64 FROM live_grant) FROM pg_control_system();
SELECT regexp_replace(test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'after-failover')$$), 'until .*', 'until …');
-- The fence's end, in the message: 4 minutes after the change was noticed.
SELECT (regexp_match(test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'after-failover')$$),
                     'until (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)$'))[1]::timestamptz
       - ('epoch'::timestamptz + (SELECT last_value FROM idgen_registry_noticed_ms) * interval '1 millisecond') AS fence_length;
CREATE TEMP TABLE new_grant AS SELECT * FROM idgen_acquire('xid12', 'after-failover', '1 minute');
SELECT n.slot % 64 <> l.slot % 64 AS other_stripe, n.slot % 64 = idgen_registry_current_stripe() AS current_stripe
FROM new_grant n, live_grant l;
SELECT regexp_replace(test_helpers.error_of(format('SELECT idgen_renew(%s, %s)', grant_id, token)), 'grant \d+ (.*) at .*', 'grant N \1 at …') FROM old_grant;
-- A live Snowflake grant renews through the fence. A live xid12 grant of the old stripe does not:
-- the old stripe is held only as long as grants made before the change can last, so its writer
-- acquires anew (at once, from the new stripe).
SELECT r.hi > l.hi AS live_snowflake_renewed FROM live_snowflake l, idgen_renew(l.grant_id, l.token, '2 minutes') r;
SELECT regexp_replace(test_helpers.error_of(format('SELECT idgen_renew(%s, %s)', grant_id, token)), 'machine id \d+', 'machine id N') FROM live_grant;
SELECT r.hi > n.hi AS new_stripe_renewed FROM new_grant n, idgen_renew(n.grant_id, n.token, '2 minutes') r;
SELECT timeline <> 999 AS new_timeline, fenced, reason ~ '^a new timeline \d+ \(was 999\)' AS why
FROM idgen_registry_origin ORDER BY seen_at DESC LIMIT 1;
-- An origin recorded before 0.7.0 has no stripe: its grants may hold any, so xid12 is fenced too.
UPDATE idgen_registry_origin SET xid12_stripe = NULL WHERE timeline = 999;
SELECT regexp_replace(test_helpers.error_of($$SELECT idgen_acquire('xid12', 'after-failover-2')$$), 'until .*', 'until …');
-- So is a pool too small to stripe (under 4096 machine ids), whatever the stripes; a striped
-- pool that shares machine ids with it leaves those alone.
UPDATE idgen_registry_origin SET xid12_stripe = (SELECT slot % 64 FROM live_grant) WHERE timeline = 999;
INSERT INTO idgen_registry_pool VALUES ('small', int4range(100, 101), int4range(5000, 5100), '1 hour');
SELECT regexp_replace(test_helpers.error_of($$SELECT idgen_acquire('xid12', 'small-1', '1 minute', 'small')$$), 'until .*', 'until …');
SELECT kind FROM idgen_acquire('xid12', 'after-failover-3', '1 minute');
SELECT idgen_registry_unstriped_slot(5000) AS shared_with_small, idgen_registry_unstriped_slot(5100) AS not_shared;
SELECT idgen_registry_lift_fence();
SELECT slot BETWEEN 5000 AND 5099 AS small_pool FROM idgen_acquire('xid12', 'small-1', '1 minute', 'small');
DELETE FROM idgen_registry_pool WHERE pool = 'small';
SELECT kind FROM idgen_acquire('snowflake', 'after-lift', '1 minute');
SELECT r.hi = r.lo AS released FROM live_snowflake l, idgen_release(l.grant_id, l.token, '-infinity') r;
-- A dump restored into a fresh CREATE EXTENSION: the install's row (where the registry began)
-- is there first, the dumped history's rows are copied in after it, with earlier moments. That
-- fences, whatever grants are to be seen: the dumped registry may have granted after the dump.
-- From another cluster, and from this one (its own dump restored).
CREATE TEMP TABLE saved_origin AS SELECT * FROM idgen_registry_origin;
CREATE TEMP VIEW here AS SELECT system_identifier AS sysid,
    ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint AS tli FROM pg_control_system();
DELETE FROM idgen_registry_origin;
INSERT INTO idgen_registry_origin SELECT sysid, tli, clock_timestamp(), false, NULL, 5 FROM here;
INSERT INTO idgen_registry_origin VALUES (12345, 1, clock_timestamp() - interval '1 day', false, NULL, 5);
SELECT regexp_replace(test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'after-restore')$$), 'until .*', 'until …');
SELECT slot % 64 <> 5 AS other_stripe FROM idgen_acquire('xid12', 'after-restore', '1 minute');
-- (A refused call rolls its row back; a later call keeps one, from the same start.)
SELECT idgen_registry_check_origin() BETWEEN clock_timestamp() - interval '10 s' AND clock_timestamp() AS fenced_now;
SELECT fenced, replace(reason, (SELECT sysid FROM here)::text, 'THIS') AS reason
FROM idgen_registry_origin ORDER BY seen_at DESC LIMIT 1;
SELECT idgen_registry_lift_fence();
DELETE FROM idgen_registry_origin;
INSERT INTO idgen_registry_origin SELECT sysid, tli, clock_timestamp(), false, NULL FROM here;
INSERT INTO idgen_registry_origin SELECT sysid, tli, clock_timestamp() - interval '1 day', false, NULL FROM here;
SELECT regexp_replace(test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'after-restore')$$), 'until .*', 'until …');
SELECT idgen_registry_check_origin() BETWEEN clock_timestamp() - interval '10 s' AND clock_timestamp() AS fenced_now;
SELECT fenced, replace(replace(reason, (SELECT sysid FROM here)::text, 'THIS'), (SELECT tli FROM here)::text, 'TLI') AS reason
FROM idgen_registry_origin ORDER BY seen_at DESC LIMIT 1;
SELECT idgen_registry_lift_fence();
-- The install's row alone (a fresh CREATE EXTENSION): no fence.
DELETE FROM idgen_registry_origin;
INSERT INTO idgen_registry_origin SELECT sysid, tli, clock_timestamp(), false, NULL FROM here;
SELECT kind FROM idgen_acquire('xid12', 'fresh', '1 minute');
-- (A row without a stripe, as before 0.7.0, gets one at the first call.)
SELECT count(*) AS origins, count(xid12_stripe) AS with_stripe FROM idgen_registry_origin;
DELETE FROM idgen_registry_origin;
INSERT INTO idgen_registry_origin SELECT * FROM saved_origin;
-- A fence closes a pool's slots for as long as a lost grant of any pool sharing them can last:
-- pools may share slots, so a pool of short leases on some of the edge pool's slots waits as
-- long as the edge pool (366 days), the app pool's own Snowflake slots 3 minutes. A pool without a row
-- is the app pool under another name (its row when it has one).
INSERT INTO idgen_registry_pool VALUES ('shares-edge', int4range(1000, 1001), int4range(16000000, 16000001), '15 seconds');
SELECT idgen_registry_fence_lease('snowflake', int4range(1000, 1001)) AS shared_with_edge,
       idgen_registry_fence_lease('xid12', int4range(16000000, 16000001)) AS shared_with_edge_xid12,
       idgen_registry_fence_lease('snowflake', int4range(0, 1)) AS app_only;
INSERT INTO idgen_registry_pool VALUES ('app', int4range(0, 500), int4range(0, 1000), '15 minutes');
SELECT idgen_registry_fence_lease('snowflake', int4range(0, 1)) AS app_row,
       idgen_registry_fence_lease('snowflake', int4range(600, 601)) AS no_pool,
       (idgen_registry_pool_of('other')).snowflake_slots AS other_like_app;
DELETE FROM idgen_registry_pool WHERE pool IN ('shares-edge', 'app');

-- Bad arguments.
SELECT test_helpers.error_of($$SELECT idgen_acquire('uuid', 'w')$$);
SELECT test_helpers.error_of($$SELECT idgen_acquire('snowflake', '')$$);
SELECT test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'w', '0 s')$$);
SELECT test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'w', '1 minute', 'reserved')$$);
-- Names have a length limit, as a varchar(n) has (22001).
SELECT test_helpers.error_of(format($$SELECT idgen_acquire('snowflake', %L)$$, repeat('w', 257)));
SELECT test_helpers.error_of(format($$SELECT idgen_acquire('snowflake', 'w', '1 minute', %L)$$, repeat('p', 64)));
SELECT test_helpers.error_of(format($$SELECT idgen_reserve('xid12', 5, %L)$$, repeat('w', 257)));
SELECT test_helpers.error_of($$SELECT idgen_reserve('snowflake', 1024, 'w')$$);
SELECT test_helpers.error_of($$SELECT idgen_reserve('xid12', -1, 'w')$$);

-- The registry's invariant is a constraint: an overlapping window written by hand fails.
SELECT test_helpers.error_of(format($$INSERT INTO idgen_registry_grant (kind, slot, pool, writer, reserved, token_sha256, lo, hi, granted_at)
    VALUES ('xid12', %s, 'app', 'forged', false, '\x00', %s, %s, now())$$,
    slot, extract(epoch FROM lo)::bigint + 1, extract(epoch FROM lo)::bigint + 2)) FROM x;

-- Exhaustion: every Snowflake worker id of the pool held is 53400, with how many and when the
-- first frees. The 'app' pool has worker ids 0-767 ('edge' the rest).
CREATE TEMP TABLE fill AS SELECT * FROM g WITH NO DATA;
DO $$
DECLARE
    detail text;
BEGIN
    FOR n IN 1 .. 1100 LOOP
        BEGIN
            INSERT INTO fill SELECT * FROM idgen_acquire('snowflake', 'filler-' || n, '1 minute');
        EXCEPTION WHEN configuration_limit_exceeded THEN
            GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
            RAISE NOTICE '%: %', SQLSTATE, SQLERRM;
            RAISE NOTICE 'detail as documented: %', detail ~ '^768 of the pool''s 768 slots \(\[0,768\)\) are held: \d+ by grants, \d+ reserved\. The first grant ends at .+\.$';
            EXIT;
        END;
    END LOOP;
END $$;
SELECT count(*) + (SELECT count(*) FROM idgen_grants WHERE kind = 'snowflake' AND reserved AND slot < 768) AS granted_plus_reserved,
       count(DISTINCT slot) = count(*) AS distinct_slots, max(slot) < 768 AS all_in_the_pool FROM fill;
-- The edge pool still has its own.
SELECT slot >= 768 AS edge_slot, hi - lo > interval '6 days' AS long_window
FROM idgen_acquire('snowflake', 'edge-device', '7 days', 'edge') a;
-- Release one (it made no id): the next acquire gets that slot.
SELECT r.hi = r.lo AS emptied FROM (SELECT * FROM fill ORDER BY slot LIMIT 1) f,
    idgen_release(f.grant_id, f.token, '-infinity') r;
INSERT INTO fill SELECT * FROM idgen_acquire('snowflake', 'next', '1 minute')
    RETURNING slot = (SELECT min(slot) FROM fill) AS same_slot;
-- Windows of one slot never overlap (also checked by the constraint).
SELECT count(*) AS overlapping_pairs FROM idgen_registry_grant a JOIN idgen_registry_grant b
    ON a.kind = b.kind AND a.slot = b.slot AND a.grant_id < b.grant_id AND a.span && b.span;
-- The fill's grants end: later suites find every Snowflake slot free again.
SELECT count(*) = (SELECT count(*) FROM fill) AS every_grant_ended FROM fill f, idgen_release(f.grant_id, f.token, '-infinity') r;
SELECT count(*) AS snowflake_slots_held FROM idgen_registry_slot WHERE kind = 'snowflake' AND NOT EXISTS (
    SELECT FROM idgen_registry_grant g WHERE g.kind = 'snowflake' AND g.slot = idgen_registry_slot.slot AND g.reserved)
    AND next_free > extract(epoch FROM clock_timestamp()) * 1000 - current_setting('pg_idgen.snowflake_epoch')::bigint;
