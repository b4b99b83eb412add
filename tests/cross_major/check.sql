-- Run on the new major version, in a database that fill.sql's database was moved into
-- (pg_upgrade, or pg_dump and pg_restore). Any failed check raises an error.
\o /dev/null
CREATE EXTENSION IF NOT EXISTS amcheck;
DO $$
BEGIN
    IF (SELECT digest FROM fingerprint) IS DISTINCT FROM
       (SELECT md5(string_agg(concat_ws(':', id, k, flake, n), ',' ORDER BY id)) FROM events) THEN
        RAISE EXCEPTION 'the data differs from what the old server stored';
    END IF;
END $$;
SELECT bt_index_check(i.indexrelid, true)
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
WHERE i.indrelid = 'events'::regclass AND am.amname = 'btree';

-- The hash and the BRIN index each find a row on their own: in a transaction rolled back
-- afterwards, the other indexes on id are dropped.
CREATE FUNCTION pg_temp.lookup_uses(index_name text, other_index text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    target xid12 := (SELECT max_id FROM fingerprint);
    plan text := '';
    line text;
BEGIN
    ALTER TABLE events DROP CONSTRAINT events_pkey;
    EXECUTE format('DROP INDEX %I', other_index);
    SET LOCAL enable_seqscan = off;
    FOR line IN EXECUTE format('EXPLAIN SELECT n FROM events WHERE id = %L', target) LOOP
        plan := plan || line || E'\n';
    END LOOP;
    IF plan NOT LIKE '%' || index_name || '%' THEN
        RAISE EXCEPTION 'the lookup does not use %: %', index_name, plan;
    END IF;
    IF (SELECT count(*) FROM events WHERE id = target) <> 1 THEN
        RAISE EXCEPTION 'the lookup through % finds no row', index_name;
    END IF;
END $$;
BEGIN;
SELECT pg_temp.lookup_uses('events_hash', 'events_brin');
ROLLBACK;
BEGIN;
SELECT pg_temp.lookup_uses('events_brin', 'events_hash');
ROLLBACK;

-- New ids continue after the stored ones; rapkey numbering continues per prefix.
INSERT INTO events (k, n) SELECT rapkey_next('ord.cn.sh'), 100000 + g FROM generate_series(1, 1000) g;
DO $$
BEGIN
    IF EXISTS (SELECT FROM events e, fingerprint f
               WHERE e.n > 100000 AND (e.id <= f.max_id OR e.flake <= f.max_flake)) THEN
        RAISE EXCEPTION 'a new id is not above the stored ones';
    END IF;
    IF (SELECT k FROM events WHERE n = 101000) NOT LIKE 'ord.cn.sh.21000-_' THEN
        RAISE EXCEPTION 'rapkey_next did not continue: %', (SELECT k FROM events WHERE n = 101000);
    END IF;
    IF (SELECT count(*) FROM events) <> (SELECT row_count FROM fingerprint) + 1000 THEN
        RAISE EXCEPTION 'rows went missing';
    END IF;
END $$;

-- The writer registry came along: the same grants, the token still renews its grant, new grant
-- ids follow the old ones, and windows of one slot still cannot overlap.
DO $$
DECLARE
    g record;
BEGIN
    IF (SELECT digest FROM registry_fingerprint) IS DISTINCT FROM
       (SELECT md5(string_agg(concat_ws(':', grant_id, kind, slot, writer, pool, lo, hi, reserved, released_at IS NULL),
                              ',' ORDER BY grant_id)) FROM idgen_grants) THEN
        RAISE EXCEPTION 'the registry differs from what the old server stored';
    END IF;
    SELECT r.* INTO g FROM held h, idgen_renew(h.grant_id, h.token) r;
    IF g.slot IS DISTINCT FROM (SELECT slot FROM held) THEN
        RAISE EXCEPTION 'the moved grant did not renew';
    END IF;
    -- In another cluster the registry is fenced: grants the old one made after the copy may be
    -- lost, so nothing new is granted until they must have ended; live grants renew.
    IF (SELECT system_identifier FROM registry_fingerprint) <> (SELECT system_identifier FROM pg_control_system()) THEN
        BEGIN
            PERFORM idgen_acquire('snowflake', 'after-move', '1 minute');
            RAISE EXCEPTION 'a moved registry granted before its fence ended';
        EXCEPTION WHEN SQLSTATE 'IG001' THEN
            NULL;
        END;
        PERFORM idgen_registry_lift_fence();
    END IF;
    SELECT * INTO g FROM idgen_acquire('snowflake', 'after-move', '1 minute');
    IF g.grant_id <= (SELECT max_grant FROM registry_fingerprint) OR g.slot IN (900, (SELECT slot FROM held)) THEN
        RAISE EXCEPTION 'a new grant reused a grant id or a held slot: %', g;
    END IF;
    BEGIN
        INSERT INTO idgen_registry_grant (kind, slot, pool, writer, reserved, token_sha256, lo, hi, granted_at)
        SELECT kind, slot, 'app', 'forged', false, '\x00', lo, lo + 1, now()
        FROM idgen_registry_grant WHERE grant_id = (SELECT grant_id FROM held);
        RAISE EXCEPTION 'an overlapping window was accepted';
    EXCEPTION WHEN exclusion_violation THEN
        NULL;
    END;
END $$;
\o
SELECT current_database() || ': all checks passed' AS cross_major;
