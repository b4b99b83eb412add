-- The extension's SQL-language and PL/pgSQL functions do not depend on the caller's
-- search_path: objects in a schema that comes first cannot take their place. Each hostile
-- object below raises a NOTICE when it runs; none may appear.
CREATE SCHEMA hostile;
CREATE FUNCTION hostile.noisy_ge(rapkey, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'hostile >= ran'; RETURN true; END $$;
CREATE FUNCTION hostile.noisy_lt(rapkey, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'hostile < ran'; RETURN true; END $$;
-- Exact type matches, which PostgreSQL prefers to pg_catalog's text operators.
CREATE OPERATOR hostile.>= (LEFTARG = rapkey, RIGHTARG = text, FUNCTION = hostile.noisy_ge);
CREATE OPERATOR hostile.< (LEFTARG = rapkey, RIGHTARG = text, FUNCTION = hostile.noisy_lt);
-- Same-signature copies of what rapkey_next calls, found first when pg_catalog comes later.
CREATE FUNCTION hostile.split_part(text, text, integer) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'hostile split_part ran'; RETURN pg_catalog.split_part($1, $2, $3); END $$;
CREATE FUNCTION hostile.string_to_array(text, text) RETURNS text[] LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'hostile string_to_array ran'; RETURN pg_catalog.string_to_array($1, $2); END $$;
CREATE FUNCTION hostile.noisy_append(text[], text) RETURNS text[] LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'hostile || ran'; RETURN pg_catalog.array_append($1, $2); END $$;
CREATE OPERATOR hostile.|| (LEFTARG = text[], RIGHTARG = text, FUNCTION = hostile.noisy_append);

CREATE TABLE prefixed (k rapkey PRIMARY KEY);
INSERT INTO prefixed SELECT rapkey_build('ord', 'cn', m, n::text)
FROM unnest(ARRAY['202406', '202407', '2024071']) m, generate_series(1, 100) n;
ANALYZE prefixed;

SET search_path = hostile, public;
SELECT rapkey_has_prefix(rapkey_build('ord', 'cn', '202407', '1'), 'ord.cn.202407') AS direct_call;
SELECT count(*) AS scanned FROM prefixed WHERE rapkey_has_prefix(k, 'ord.cn.202407');
-- Still inlined into an index range scan.
SET enable_seqscan = off;
SELECT line FROM test_helpers.plan_lines($$SELECT k FROM prefixed WHERE rapkey_has_prefix(k, 'ord.cn.202407')$$) line
WHERE line ~ '(Scan|Cond)';
RESET enable_seqscan;
SET search_path = hostile, pg_catalog, public;
SELECT rapkey_next('ord.hostile') AS next_key;
SELECT rapkey_has_prefix(rapkey_build('ord', 'cn', '202407', '1'), 'ord.cn.202407') AS direct_call_catalog_later;
-- The Citus helpers, without Citus (tests/citus runs them on a cluster).
SELECT test_helpers.error_of('SELECT rapkey_counter_distribute()') AS counter_distribute;
SELECT test_helpers.error_of('SELECT * FROM idgen_check_cluster_identities()') AS check_identities;
RESET search_path;
-- idgen_backfill and its helpers: hostile copies of the operators their own statements use
-- (integer keys and counters, text comparisons and concatenation). They warn when they run;
-- the procedure's final NOTICE (with a run time) is hidden by client_min_messages.
CREATE FUNCTION hostile.warn_int(integer, integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile integer comparison ran'; RETURN true; END $$;
CREATE FUNCTION hostile.warn_int_add(integer, integer) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile integer + ran'; RETURN 0; END $$;
CREATE FUNCTION hostile.warn_text(text, text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile text = ran'; RETURN false; END $$;
CREATE FUNCTION hostile.warn_concat(text, text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile text || ran'; RETURN ''; END $$;
CREATE OPERATOR hostile.>= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = hostile.warn_int);
CREATE OPERATOR hostile.> (LEFTARG = integer, RIGHTARG = integer, FUNCTION = hostile.warn_int);
CREATE OPERATOR hostile.= (LEFTARG = integer, RIGHTARG = integer, FUNCTION = hostile.warn_int);
CREATE OPERATOR hostile.+ (LEFTARG = integer, RIGHTARG = integer, FUNCTION = hostile.warn_int_add);
CREATE OPERATOR hostile.= (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.warn_text);
CREATE OPERATOR hostile.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.warn_concat);
CREATE TABLE walked (id integer PRIMARY KEY, made timestamptz NOT NULL, x xid12);
CREATE INDEX ON walked (made);
INSERT INTO walked SELECT g, '2026-01-01'::timestamptz + g * interval '1 minute', NULL FROM generate_series(1, 300) g;
SET client_min_messages = warning;
SET search_path = hostile, pg_catalog, public;
CALL idgen_backfill('walked', 'x', 'gen_xid12(made)', batch_size => 100);
RESET search_path;
UPDATE walked SET x = NULL WHERE id > 150;
SET search_path = hostile, pg_catalog, public;
CALL idgen_backfill('walked', 'x', 'gen_xid12(made)', batch_size => 100, order_by => 'made');
RESET search_path;
RESET client_min_messages;
SELECT count(x) AS filled, count(*) FILTER (WHERE xid12_time(x) = made) AS in_time FROM walked;
DELETE FROM idgen_backfill_progress WHERE relation = 'walked'::regclass;
DROP TABLE walked;
-- The sorted walk (no index on order_by; a partitioned table) and its work table: hostile
-- copies of the bigint operators it uses on sequence numbers.
CREATE FUNCTION hostile.warn_bigint(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile bigint comparison ran'; RETURN true; END $$;
CREATE FUNCTION hostile.warn_bigint_arith(bigint, bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile bigint arithmetic ran'; RETURN 0; END $$;
CREATE OPERATOR hostile.> (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.warn_bigint);
CREATE OPERATOR hostile.>= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.warn_bigint);
CREATE OPERATOR hostile.<= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.warn_bigint);
CREATE OPERATOR hostile.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.warn_bigint);
CREATE OPERATOR hostile.+ (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.warn_bigint_arith);
CREATE OPERATOR hostile.- (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = hostile.warn_bigint_arith);
CREATE OPERATOR hostile.<> (LEFTARG = text, RIGHTARG = text, FUNCTION = hostile.warn_text);
CREATE TABLE unwalked (id integer PRIMARY KEY, made timestamptz NOT NULL, x xid12);
INSERT INTO unwalked SELECT g, '2026-01-01'::timestamptz + (301 - g) * interval '1 minute', NULL FROM generate_series(1, 300) g;
CREATE TABLE parted (id integer, made timestamptz NOT NULL, x xid12, PRIMARY KEY (id, made)) PARTITION BY RANGE (made);
CREATE TABLE parted_1 PARTITION OF parted FOR VALUES FROM ('2026-01-01') TO ('2026-01-01 02:00');
CREATE TABLE parted_2 PARTITION OF parted DEFAULT;
INSERT INTO parted SELECT id, made FROM unwalked;
SET client_min_messages = warning;
SET search_path = hostile, pg_catalog, public;
CALL idgen_backfill('unwalked', 'x', 'gen_xid12(made)', batch_size => 100, order_by => 'made');
CALL idgen_backfill('parted', 'x', 'gen_xid12(made)', batch_size => 100, order_by => 'made');
RESET search_path;
RESET client_min_messages;
SELECT count(x) AS filled, count(*) FILTER (WHERE xid12_time(x) = made) AS in_time,
       bool_and(x > prior) AS in_order
FROM (SELECT x, made, lag(x) OVER (ORDER BY made) AS prior FROM unwalked) s;
SELECT count(x) AS filled, count(*) FILTER (WHERE xid12_time(x) = made) AS in_time,
       bool_and(x > prior) AS in_order
FROM (SELECT x, made, lag(x) OVER (ORDER BY made) AS prior FROM parted) s;
SELECT count(*) AS work_tables_left FROM pg_class WHERE relname ~ '^idgen_backfill_[0-9]+_[0-9]+$';
DELETE FROM idgen_backfill_progress WHERE relation IN ('unwalked'::regclass, 'parted'::regclass);
DROP TABLE unwalked, parted;
-- Hostile types: domains named like the built-in types that idgen_backfill's statements and
-- variables use, whose CHECK warns when a value is cast to one; and a table named like a
-- temporary table, in a schema before pg_temp, whose trigger warns when a batch updates it.
-- A new session: PL/pgSQL resolves a procedure's variable types when it first compiles it in
-- a session, so the procedure must not have run yet.
\c -
CREATE FUNCTION hostile.warn_check() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile domain check ran'; RETURN true; END $$;
CREATE DOMAIN hostile.text AS pg_catalog.text CHECK (hostile.warn_check());
CREATE DOMAIN hostile.tid AS pg_catalog.tid CHECK (hostile.warn_check());
CREATE DOMAIN hostile.regtype AS pg_catalog.regtype CHECK (hostile.warn_check());
CREATE TABLE keyed (id uuid PRIMARY KEY, made timestamptz NOT NULL, x xid12);
CREATE INDEX ON keyed (made);
INSERT INTO keyed SELECT md5(g::text)::uuid, '2026-01-01'::timestamptz + g * interval '1 minute', NULL
FROM generate_series(1, 300) g;
CREATE TEMPORARY TABLE scratch (id integer PRIMARY KEY, x xid12);
INSERT INTO scratch SELECT g, NULL FROM generate_series(1, 300) g;
CREATE TABLE hostile.scratch (id integer PRIMARY KEY, x xid12);
INSERT INTO hostile.scratch SELECT g, NULL FROM generate_series(1, 300) g;
CREATE FUNCTION hostile.warn_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE WARNING 'hostile.scratch updated'; RETURN NEW; END $$;
CREATE TRIGGER warn_update BEFORE UPDATE ON hostile.scratch FOR EACH ROW EXECUTE FUNCTION hostile.warn_update();
SET client_min_messages = warning;
SET search_path = hostile, pg_catalog, public;
CALL idgen_backfill('keyed', 'x', 'gen_xid12(made)', batch_size => 100);
UPDATE public.keyed SET x = NULL WHERE made > '2026-01-01 02:30';
CALL idgen_backfill('keyed', 'x', 'gen_xid12(made)', batch_size => 100, order_by => 'made');
SET search_path = hostile, pg_temp, pg_catalog, public;
CALL idgen_backfill('pg_temp.scratch', 'x', 'gen_xid12()', batch_size => 100);
RESET search_path;
RESET client_min_messages;
SELECT count(x) AS filled, count(*) FILTER (WHERE xid12_time(x) = made) AS in_time FROM keyed;
SELECT (SELECT count(x) FROM pg_temp.scratch) AS temp_filled, (SELECT count(x) FROM hostile.scratch) AS hostile_filled;
DELETE FROM idgen_backfill_progress WHERE relation IN ('keyed'::regclass, 'pg_temp.scratch'::regclass);
DROP TABLE keyed, pg_temp.scratch;
-- A Snowflake slot that no grant of the suites before holds (their slots are picked at random).
SELECT min(s) AS free_slot FROM generate_series(1001, 1023) s
WHERE NOT EXISTS (SELECT FROM idgen_grants g WHERE g.kind = 'snowflake' AND g.slot = s AND g.hi > clock_timestamp()) \gset
-- The writer registry, with the hostile integer and text operators first: no warning.
SET search_path = hostile, pg_catalog, public;
SELECT a.kind, r.hi >= a.hi AS renewed, p = 1 AS reported, l.hi = l.lo AS released
FROM idgen_acquire('xid12', 'hostile-test', '1 minute') a,
     LATERAL idgen_renew(a.grant_id, a.token) r, LATERAL idgen_report(a.grant_id, a.token, 'hostile-device', 0, a.lo) p,
     LATERAL idgen_release(a.grant_id, a.token, '-infinity') l;
SELECT idgen_reserve('snowflake', :free_slot, 'hostile-test') > 0 AS reserved;
SELECT writer FROM idgen_writer_of((1099511627776::bigint << 22) | (:free_slot << 12));
CREATE TEMP TABLE hostile_ids AS SELECT 5::bigint AS id UNION ALL SELECT (1099511627776::bigint << 22) | (:free_slot << 12);
SELECT id, pg_catalog.split_part(reason, ';', 1) AS reason FROM idgen_verify('hostile_ids', 'id');
RESET search_path;
-- Every such function of the extension is covered above: the list is checked here.
SELECT p.proname, l.lanname
FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_idgen'
WHERE l.lanname NOT IN ('c', 'internal')
ORDER BY 1;
DELETE FROM rapkey_counter WHERE prefix = 'ord.hostile';
DROP TABLE prefixed;
DROP SCHEMA hostile CASCADE;
