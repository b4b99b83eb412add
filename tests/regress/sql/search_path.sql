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
