-- Casts from text and varchar to xid12 are ASSIGNMENT casts (0.5.0). This test shows what they
-- make work (storing a text or varchar value into xid12), and proves that no expression changes
-- meaning or becomes ambiguous: every probe below is evaluated with the casts and again after
-- dropping them (in a transaction rolled back), and the results must be the same.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;

-- The casts into and out of xid12 (xid12 to text and varchar are PostgreSQL's automatic I/O
-- conversion casts, assignment, which pg_cast does not list). Not one into xid12 is implicit,
-- and operator and function resolution only consider implicit casts.
SELECT castsource::regtype, casttarget::regtype, castcontext, castmethod
FROM pg_catalog.pg_cast
WHERE casttarget = 'xid12'::regtype OR castsource = 'xid12'::regtype
ORDER BY castsource::regtype::text, casttarget::regtype::text;

CREATE TABLE cast_probe (id xid12, t text, v varchar, c char(20), r rapkey);
INSERT INTO cast_probe VALUES ('9m4e2mr0ui3e8a215n4g', '9m4e2mr0ui3e8a215n4g',
    '9m4e2mr0ui3e8a215n4g', '9m4e2mr0ui3e8a215n4g', 'ord.cn.sh.202407.8842-2');
CREATE TABLE cast_dest (id xid12);
-- Overloads: text and xid12; xid12 only; varchar and xid12.
CREATE FUNCTION cast_probe_f(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'f(text)' $$;
CREATE FUNCTION cast_probe_f(xid12) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'f(xid12)' $$;
CREATE FUNCTION cast_probe_g(xid12) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'g(xid12)' $$;
CREATE FUNCTION cast_probe_h(varchar) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'h(varchar)' $$;
CREATE FUNCTION cast_probe_h(xid12) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'h(xid12)' $$;

-- The type and value of an expression over cast_probe's row, or its error.
CREATE FUNCTION cast_probe_eval(expr text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text;
BEGIN
    EXECUTE format('SELECT pg_typeof(x)::text || '' '' || coalesce(x::text, ''NULL'')
                    FROM (SELECT %s AS x FROM cast_probe) s', expr) INTO result;
    RETURN result;
EXCEPTION WHEN others THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE cast_expressions (n int PRIMARY KEY, expr text);
INSERT INTO cast_expressions VALUES
    (1, $$id = '9m4e2mr0ui3e8a215n4g'$$),
    (2, $$'9m4e2mr0ui3e8a215n4g' = id$$),
    (3, $$id = t$$),
    (4, $$t = id$$),
    (5, $$id = v$$),
    (6, $$v = id$$),
    (7, $$id = c$$),
    (8, $$id < v$$),
    (9, $$id IS DISTINCT FROM t$$),
    (10, $$id = t::xid12$$),
    (11, $$id::text = t$$),
    (12, $$id IN ('9m4e2mr0ui3e8a215n4g', '00000000000000000000')$$),
    (13, $$id IN (t, v)$$),
    (14, $$id = ANY ('{9m4e2mr0ui3e8a215n4g}')$$),
    (15, $$id = ANY (ARRAY[t])$$),
    (16, $$id = ANY (ARRAY[v])$$),
    (17, $$row(id) = row(t)$$),
    (18, $$id || 'x'$$),
    (19, $$'x' || id$$),
    (20, $$id || t$$),
    (21, $$t || id$$),
    (22, $$id || v$$),
    (23, $$coalesce(id, '00000000000000000000')$$),
    (24, $$coalesce(id, t)$$),
    (25, $$coalesce(t, id)$$),
    (26, $$coalesce(v, id)$$),
    (27, $$CASE WHEN true THEN id ELSE t END$$),
    (28, $$CASE WHEN true THEN id ELSE '00000000000000000000' END$$),
    (29, $$greatest(id, v)$$),
    (30, $$nullif(id, t)$$),
    (31, $$(SELECT id UNION SELECT t LIMIT 1)$$),
    (32, $$ARRAY[id, t]$$),
    (33, $$cast_probe_f(id)$$),
    (34, $$cast_probe_f(t)$$),
    (35, $$cast_probe_f(v)$$),
    (36, $$cast_probe_f('9m4e2mr0ui3e8a215n4g')$$),
    (37, $$cast_probe_g(t)$$),
    (38, $$cast_probe_g(v)$$),
    (39, $$cast_probe_g('9m4e2mr0ui3e8a215n4g')$$),
    (40, $$cast_probe_h(t)$$),
    (41, $$cast_probe_h(v)$$),
    (42, $$cast_probe_h(id)$$),
    (43, $$xid12('\x4d88e15b60f486e428412dc9')$$),
    (44, $$xid12(t)$$),
    (45, $$xid12(v)$$),
    (46, $$t::xid12$$),
    (47, $$v::xid12$$),
    (48, $$c::xid12$$),
    (49, $$r::xid12$$),
    (50, $$CAST(v AS xid12)$$),
    (51, $$length(id)$$),
    (52, $$upper(id)$$),
    (53, $$id LIKE '9m%'$$),
    (54, $$id ~ '^9m'$$),
    (55, $$position('9m' in id)$$),
    (56, $$format('%s', id)$$),
    (57, $$concat(id, t)$$),
    (58, $$to_json(id)$$),
    (59, $$(SELECT min(x) FROM (VALUES (t), (v)) s(x))$$),
    (60, $$'9m4e2mr0ui3e8a215n4g'::varchar = id$$),
    (61, $$xid12('\x4d88e15b60f486e428412dc9'::bytea)$$);

-- Statements that assign a value to an xid12: these are what the casts change.
CREATE TABLE cast_statements (n int PRIMARY KEY, statement text);
INSERT INTO cast_statements VALUES
    (1, $$INSERT INTO cast_dest (id) SELECT t FROM cast_probe$$),
    (2, $$INSERT INTO cast_dest (id) SELECT v FROM cast_probe$$),
    (3, $$INSERT INTO cast_dest (id) VALUES ('9m4e2mr0ui3e8a215n4g'::varchar)$$),
    (4, $$INSERT INTO cast_dest (id) VALUES ('9m4e2mr0ui3e8a215n4g'::text)$$),
    (5, $$UPDATE cast_dest SET id = (SELECT v FROM cast_probe)$$),
    (6, $$INSERT INTO cast_dest (id) VALUES ('9m4e2mr0ui3e8a215n4g')$$),
    (7, $$INSERT INTO cast_dest (id) SELECT c FROM cast_probe$$),
    (8, $$INSERT INTO cast_dest (id) SELECT r FROM cast_probe$$),
    (9, $$INSERT INTO cast_dest (id) VALUES ('not an id'::varchar)$$),
    (10, $s$DO $do$ DECLARE x xid12; BEGIN x := 'vvvvvvvvvvvvvvvvvvvg'::text; END $do$$s$);

-- With the casts.
SELECT n, expr, cast_probe_eval(expr) AS result FROM cast_expressions ORDER BY n;
SELECT n, statement, test_helpers.error_of(statement) AS result FROM cast_statements ORDER BY n;
SELECT id, count(*) FROM cast_dest GROUP BY id ORDER BY id;
CREATE TABLE cast_results AS SELECT n, cast_probe_eval(expr) AS result FROM cast_expressions;

-- A driver that binds a varchar parameter (pgjdbc's setString) stores through the cast; a
-- comparison with one still needs the parameter typed as xid12 (or text and an explicit cast).
PREPARE cast_insert(varchar) AS INSERT INTO cast_dest (id) VALUES ($1);
EXECUTE cast_insert('00000000000000000000');
PREPARE cast_find(varchar) AS SELECT count(*) FROM cast_dest WHERE id = $1;
PREPARE cast_find_cast(varchar) AS SELECT count(*) FROM cast_dest WHERE id = $1::xid12;
EXECUTE cast_find_cast('00000000000000000000');

-- A text column of ids becomes an xid12 column without USING; a bad value says which.
CREATE TABLE cast_alter (id text);
INSERT INTO cast_alter VALUES ('9m4e2mr0ui3e8a215n4g'), ('vvvvvvvvvvvvvvvvvvvg');
ALTER TABLE cast_alter ALTER COLUMN id TYPE xid12;
SELECT pg_typeof(id), id FROM cast_alter ORDER BY id;
CREATE TABLE cast_alter_bad (id varchar);
INSERT INTO cast_alter_bad VALUES ('9m4e2mr0ui3e8a215n4g'), ('9m4e2mr0ui3e8a215n41');
ALTER TABLE cast_alter_bad ALTER COLUMN id TYPE xid12;

-- Without the casts: every expression gives what it gave with them; the assignments of a text
-- or varchar value fail as they did before 0.5.0.
BEGIN;
ALTER EXTENSION pg_idgen DROP CAST (text AS xid12);
ALTER EXTENSION pg_idgen DROP CAST (varchar AS xid12);
DROP CAST (text AS xid12);
DROP CAST (varchar AS xid12);
SELECT count(*) AS expressions,
       count(*) FILTER (WHERE r.result IS DISTINCT FROM cast_probe_eval(e.expr)) AS changed
FROM cast_expressions e JOIN cast_results r USING (n);
SELECT n, e.expr, r.result AS with_casts, cast_probe_eval(e.expr) AS without_casts
FROM cast_expressions e JOIN cast_results r USING (n)
WHERE r.result IS DISTINCT FROM cast_probe_eval(e.expr)
ORDER BY n;
SELECT n, statement, test_helpers.error_of(statement) AS result FROM cast_statements ORDER BY n;
ROLLBACK;

-- The casts are back.
SELECT count(*) FROM pg_catalog.pg_cast WHERE casttarget = 'xid12'::regtype AND castcontext = 'a';

DROP TABLE cast_probe, cast_dest, cast_expressions, cast_statements, cast_results, cast_alter,
    cast_alter_bad;
DROP FUNCTION cast_probe_f(text), cast_probe_f(xid12), cast_probe_g(xid12),
    cast_probe_h(varchar), cast_probe_h(xid12), cast_probe_eval(text);
DEALLOCATE ALL;
