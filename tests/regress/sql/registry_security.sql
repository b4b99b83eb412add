-- Who may do what in the writer registry (README "Who may do what"; docs/registry-security.md).
-- Trusted: the superuser and the extension's owner. Not trusted: writer roles, other roles,
-- owners of schemas. Run as the roles the README has a DBA create: two writers, an application
-- role that only reads, a role with nothing. Every attack is refused with its SQLSTATE.
SET timezone = 'UTC';
CREATE ROLE regress_sec_w1;
CREATE ROLE regress_sec_w2 LOGIN;
CREATE ROLE regress_sec_reader;
CREATE ROLE regress_sec_nobody;
CREATE ROLE regress_sec_group;
CREATE ROLE regress_sec_member IN ROLE regress_sec_group;
GRANT USAGE ON SCHEMA test_helpers TO PUBLIC;
-- The README's block for a DBA: a pool and a cap per writer role, the view for those who read.
SELECT idgen_pool_allow('app', 'regress_sec_w1', 3);
SELECT idgen_pool_allow('app', 'regress_sec_w2', 3);
SELECT idgen_pool_allow('app', 'regress_sec_group', 2);
GRANT SELECT ON idgen_grants TO regress_sec_w1, regress_sec_w2, regress_sec_reader;
-- Its bad arguments: a pool that cannot be one, a role that does not exist, a cap below 1.
SELECT s AS statement, test_helpers.error_of(s) AS error FROM (VALUES
    ($$SELECT idgen_pool_allow(NULL, 'regress_sec_w1')$$),
    ($$SELECT idgen_pool_allow('', 'regress_sec_w1')$$),
    ($$SELECT idgen_pool_allow('reserved', 'regress_sec_w1')$$),
    ($$SELECT idgen_pool_allow(repeat('p', 64), 'regress_sec_w1')$$),
    ($$SELECT idgen_pool_allow('app', NULL)$$),
    ($$SELECT idgen_pool_allow('app', 'regress_no_such_role')$$),
    ($$SELECT idgen_pool_allow('app', 'regress_sec_w1', 0)$$),
    ($$SELECT idgen_pool_allow('app', 'regress_sec_w1', NULL)$$)
) v(s);
SELECT pool, member, max_live FROM idgen_registry_pool_role WHERE member::text LIKE 'regress_sec_%' ORDER BY member::text;
-- Tokens the test keeps to clean up.
CREATE TABLE test_helpers.kept (grant_id bigint, token bigint);
GRANT ALL ON test_helpers.kept TO PUBLIC;

-- An honest writer's grant: its role is recorded (provenance), in the view and idgen_writer_of.
SET ROLE regress_sec_w1;
SELECT grant_id AS g1, token AS t1, slot AS s1, epoch_ms AS e1 FROM idgen_acquire('snowflake', 'honest-1', '1 minute') \gset
INSERT INTO test_helpers.kept VALUES (:g1, :t1);
SELECT writer, db_role, pool, kind FROM idgen_grants WHERE grant_id = :g1;
SELECT w.writer, w.db_role
FROM idgen_grants g, idgen_writer_of(((extract(epoch FROM g.lo + interval '1 s') * 1000)::bigint - g.epoch_ms) << 22
                                     | (g.slot::bigint << 12) | 7) w
WHERE g.grant_id = :g1;
RESET ROLE;

-- The hostile writer, logged in as itself: every right on the registry's tables and sequences is
-- refused (42501).
\c - regress_sec_w2
SELECT s AS statement, regexp_replace(test_helpers.error_of(replace(replace(s, '{g1}', :'g1'), '{t1}', :'t1')), 'grant \d+', 'grant N', 'g') AS error FROM (VALUES
    ('UPDATE idgen_registry_grant SET hi = lo WHERE grant_id = {g1}'),
    ('UPDATE idgen_registry_grant SET token_sha256 = sha256(int8send(1)) WHERE grant_id = {g1}'),
    ('UPDATE idgen_registry_grant SET epoch_ms = 0'),
    ('DELETE FROM idgen_registry_grant'),
    ('TRUNCATE idgen_registry_grant'),
    ('SELECT token_sha256 FROM idgen_registry_grant'),
    ($$INSERT INTO idgen_registry_grant (kind, slot, pool, writer, reserved, token_sha256, lo, hi, granted_at, db_role)
       VALUES ('snowflake', 1, 'app', 'honest-1', false, sha256(int8send(1)), 0, 1, now(), 'regress_sec_w1')$$),
    ('UPDATE idgen_registry_slot SET next_free = 0'),
    ($$INSERT INTO idgen_registry_origin VALUES (1, 1, now(), true, 'forged')$$),
    ('UPDATE idgen_registry_origin SET fenced = false'),
    ($$INSERT INTO idgen_registry_report VALUES (1, 99, 'forged', NULL, now(), NULL)$$),
    ('UPDATE idgen_registry_report SET syncs = syncs + 1'),
    ($$INSERT INTO idgen_registry_pool VALUES ('mine', int4range(0, 768), int4range(0, 10), '366 days')$$),
    ($$INSERT INTO idgen_registry_pool_role VALUES ('edge', 'regress_sec_w2', 1000)$$),
    ($$UPDATE idgen_registry_pool_role SET max_live = 1000$$),
    ($$DELETE FROM idgen_registry_quota$$),
    ($$SELECT setval('idgen_registry_noticed_ms', 9000000000000)$$),
    ($$SELECT nextval('idgen_registry_grant_id_seq')$$)
) v(s);
-- ... and so is every function that is not a writer's: reservations, the fence, the pools' ACL,
-- the internals.
SELECT s AS statement, regexp_replace(test_helpers.error_of(replace(replace(s, '{g1}', :'g1'), '{t1}', :'t1')), 'grant \d+', 'grant N', 'g') AS error FROM (VALUES
    ($$SELECT idgen_reserve('snowflake', 5, 'mine')$$),
    ($$SELECT idgen_registry_reserve('snowflake', 5, 'mine', true)$$),
    ('SELECT idgen_registry_lift_fence()'),
    ('SELECT idgen_registry_check_origin()'),
    ('SELECT idgen_registry_holder({g1}, 0)'),
    ('SELECT idgen_registry_durable()'),
    ($$SELECT idgen_registry_own_slot('snowflake')$$),
    ($$SELECT idgen_registry_pool_of('edge')$$),
    ($$SELECT idgen_registry_cap('edge', 'regress_sec_w2')$$),
    ($$SELECT idgen_pool_allow('edge', 'regress_sec_w2', 1000)$$),
    ($$SELECT idgen_pool_disallow('app', 'regress_sec_w1')$$)
) v(s);
-- Another writer's grant without its token: 42501, whatever it tries.
SELECT s AS statement, regexp_replace(test_helpers.error_of(replace(replace(s, '{g1}', :'g1'), '{t1}', :'t1')), 'grant \d+', 'grant N', 'g') AS error FROM (VALUES
    ('SELECT idgen_renew({g1}, 12345)'),
    ($$SELECT idgen_release({g1}, 12345, '-infinity')$$),
    ($$SELECT idgen_report({g1}, 12345, 'forged-device', 0)$$)
) v(s);
-- With its token (stolen, or copied with a device's file), still refused: the grant is w1's.
SELECT regexp_replace(test_helpers.error_of(format('SELECT idgen_renew(%s, %s)', :g1, :t1)), 'grant \d+', 'grant N') AS stolen_renew;
SELECT regexp_replace(test_helpers.error_of(format('SELECT idgen_release(%s, %s)', :g1, :t1)), 'grant \d+', 'grant N') AS stolen_release;
-- It cannot act as another role, and a writer label of another's is only a label: the grant
-- records the role that made it.
SELECT test_helpers.error_of('SET ROLE regress_sec_w1') AS become_w1;
SELECT grant_id AS g2, token AS t2 FROM idgen_acquire('snowflake', 'honest-1', '1 minute') \gset
INSERT INTO test_helpers.kept VALUES (:g2, :t2);
SELECT writer, db_role FROM idgen_grants WHERE grant_id = :g2;
-- Pools it is not allowed (IG002): the edge pool's 366-day leases, and an app-like pool of another name.
SELECT test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'w2', '366 days', 'edge')$$) AS edge_pool;
SELECT test_helpers.error_of($$SELECT idgen_acquire('xid12', 'w2', '1 minute', 'other')$$) AS other_pool;
-- Its cap: 3 live grants in the pool (it holds 1); the fourth is IG003. A released grant is
-- not live.
SELECT count(*) AS acquired FROM (SELECT idgen_acquire('xid12', 'w2', '1 minute') FROM generate_series(1, 2)) a;
SELECT test_helpers.error_of($$SELECT idgen_acquire('xid12', 'w2', '1 minute')$$) AS over_cap;
SELECT count(*) AS released FROM idgen_release(:g2, :t2, '-infinity');
SELECT grant_id AS g3, token AS t3 FROM idgen_acquire('xid12', 'w2', '1 minute') \gset
INSERT INTO test_helpers.kept VALUES (:g3, :t3);
SELECT count(*) AS live_of_w2 FROM idgen_grants WHERE db_role = 'regress_sec_w2' AND released_at IS NULL;
-- Leases with a month or year part are refused (22023): they escaped the cap before.
SELECT l AS lease, test_helpers.error_of(format('SELECT idgen_acquire(%L, %L, %L)', 'snowflake', 'w2', l)) AS error
FROM unnest(ARRAY['1 mon', '648 mons -19440 days 1 hour', '1 year -364 days', '-1 mons 31 days']) l;
SELECT test_helpers.error_of(format('SELECT idgen_renew(%s, %s, %L)', :g3, :t3, '1 mon -29 days')) AS renew_months;
-- ... and a lease that is too long is refused whatever its form.
SELECT test_helpers.error_of($$SELECT idgen_acquire('snowflake', 'w2', '1 day -22 hours')$$) AS two_hours;
-- The honest writer's grant is as it was.
SELECT g.hi > g.lo AND g.released_at IS NULL AS intact FROM idgen_grants g WHERE g.grant_id = :g1;
-- A hostile search_path changes nothing in the registry's functions.
CREATE TEMP TABLE idgen_registry_grant (grant_id bigint);
SET search_path = pg_temp, public, pg_catalog;
SELECT count(*) AS renewed FROM public.idgen_renew(:g3, :t3);
RESET search_path;
DROP TABLE pg_temp.idgen_registry_grant;
\c - postgres
SET timezone = 'UTC';

-- A role that only reads: the view, idgen_writer_of; no writer function.
SET ROLE regress_sec_reader;
SELECT count(*) > 0 AS sees_grants FROM idgen_grants;
SELECT test_helpers.error_of($$SELECT idgen_acquire('xid12', 'reader', '1 minute')$$) AS acquire;
-- A role given EXECUTE by mistake, outside every pool's ACL, still gets no grant.
RESET ROLE;
GRANT EXECUTE ON FUNCTION idgen_acquire(text, text, interval, text) TO regress_sec_reader;
SET ROLE regress_sec_reader;
SELECT test_helpers.error_of($$SELECT idgen_acquire('xid12', 'reader', '1 minute')$$) AS acquire_outside_acl;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION idgen_acquire(text, text, interval, text) FROM regress_sec_reader;
-- A role with nothing: no function, no view, no table.
SET ROLE regress_sec_nobody;
SELECT s AS statement, regexp_replace(test_helpers.error_of(replace(replace(s, '{g1}', :'g1'), '{t1}', :'t1')), 'grant \d+', 'grant N', 'g') AS error FROM (VALUES
    ($$SELECT idgen_acquire('xid12', 'nobody', '1 minute')$$),
    ('SELECT idgen_renew({g1}, {t1})'),
    ('SELECT count(*) FROM idgen_grants'),
    ('SELECT count(*) FROM idgen_writer_of(1::bigint)'),
    ('SELECT count(*) FROM idgen_registry_grant')
) v(s);
RESET ROLE;

-- A group role in a pool's ACL: its members may use the pool, each with the group's cap, and
-- their grants record the member.
SET ROLE regress_sec_member;
SELECT grant_id AS g4, token AS t4 FROM idgen_acquire('xid12', 'member', '1 minute') \gset
INSERT INTO test_helpers.kept VALUES (:g4, :t4);
SELECT count(*) AS second FROM idgen_acquire('xid12', 'member', '1 minute');
SELECT test_helpers.error_of($$SELECT idgen_acquire('xid12', 'member', '1 minute')$$) AS over_group_cap;
RESET ROLE;
SELECT db_role, count(*) FROM idgen_grants WHERE writer = 'member' GROUP BY db_role;
-- Taken out of the pool, a role can no longer renew there (nor acquire).
SELECT idgen_pool_disallow('app', 'regress_sec_group');
SET ROLE regress_sec_member;
SELECT test_helpers.error_of(format('SELECT idgen_renew(%s, %s)', :g4, :t4)) AS renew_after_disallow;
RESET ROLE;

-- Trusted roles: the superuser needs no ACL and has no cap (the registry suite: it reserves and lifts fences).
-- Leases are elapsed seconds whatever the TimeZone: a 200-day lease crosses both DST changes
-- of New York and lasts exactly 200 * 86400 s.
SET timezone = 'America/New_York';
SELECT grant_id AS g5, token AS t5 FROM idgen_acquire('xid12', 'dst', '200 days', 'edge') \gset
INSERT INTO test_helpers.kept VALUES (:g5, :t5);
SELECT extract(epoch FROM g.hi) - floor(extract(epoch FROM g.granted_at)) AS lease_seconds
FROM idgen_grants g WHERE g.grant_id = :g5;
SELECT test_helpers.error_of($$SELECT idgen_acquire('xid12', 'dst', '12 mons 6 days', 'edge')$$) AS twelve_months;
SET timezone = 'UTC';
-- The grants of the roles recorded: who made what.
SELECT db_role, count(*) FROM idgen_grants WHERE db_role LIKE 'regress_sec_%' GROUP BY db_role ORDER BY db_role;

-- Clean up: the superuser (trusted) releases every kept grant with its token; the roles leave
-- the pools.
SELECT count(*) AS released FROM test_helpers.kept k, LATERAL idgen_release(k.grant_id, k.token, '-infinity') r;
SELECT idgen_pool_disallow('app', 'regress_sec_w1');
SELECT idgen_pool_disallow('app', 'regress_sec_w2');
DELETE FROM idgen_registry_quota WHERE db_role LIKE 'regress_sec_%';
REVOKE ALL ON idgen_grants FROM regress_sec_w1, regress_sec_w2, regress_sec_reader;
REVOKE USAGE ON SCHEMA test_helpers FROM PUBLIC;
DROP TABLE test_helpers.kept;
DROP ROLE regress_sec_w1, regress_sec_w2, regress_sec_reader, regress_sec_nobody, regress_sec_member, regress_sec_group;
