-- A hostile public schema, as PostgreSQL 14 (and every database upgraded from it) allows: a
-- role with no grants (but USAGE on the extension's types, below) creates look-alikes of the
-- operators, functions, types and relations the clients' statements use, which return wrong
-- values and record that they ran. Run by a superuser in a database made for the test; the
-- Python (test_hostile_search_path.py), Rust (tests/hostile_search_path.rs) and Node
-- (test/server/hostile_search_path.test.mjs) clients' tests then check that their registry
-- statements ran none of them and computed exactly the server's window.
--
-- Each look-alike calls public.hostile_note, which takes a number from the sequence
-- public.hostile_calls (not transactional: a call in a statement that failed or was rolled
-- back still counts) and adds a row to public.hostile_ran (which says which one ran). Both
-- belong to the attacker and are open to PUBLIC.
--
-- Some look-alikes are reached through the default search_path ("$user", public): an exact
-- match in public beats pg_catalog's operator or function that needs an implicit cast
-- (numeric * integer, bigint * interval, quote_ident(name), and the extension's own functions
-- called with int2 or int4 arguments when the extension lives in public). The others (exact
-- matches of pg_catalog's, and the types and catalog relations) are reached only when the
-- caller's search_path puts public before pg_catalog; the tests run both paths.

DO $$ BEGIN
    CREATE ROLE idgen_hostile NOLOGIN;
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;
-- PostgreSQL 15 took CREATE on public from PUBLIC; 14 gives it.
GRANT CREATE ON SCHEMA public TO PUBLIC;
-- USAGE on the extension's types (xid12, rapkey) is not PUBLIC's: the owner grants it to the
-- roles that create tables or functions with them (README, Permissions). This role is one of
-- those gone bad, so that it can plant operators on them below.
DO $$
DECLARE
    t pg_catalog.regtype;
BEGIN
    FOR t IN SELECT ty.oid FROM pg_catalog.pg_type ty
               JOIN pg_catalog.pg_extension e ON e.extnamespace = ty.typnamespace
              WHERE e.extname = 'pg_idgen' AND ty.typname IN ('xid12', 'rapkey') LOOP
        EXECUTE pg_catalog.format('GRANT USAGE ON TYPE %s TO idgen_hostile', t);
    END LOOP;
END $$;

SET ROLE idgen_hostile;

CREATE TABLE public.hostile_ran (what text NOT NULL);
CREATE SEQUENCE public.hostile_calls;
GRANT SELECT, INSERT ON public.hostile_ran TO PUBLIC;
GRANT USAGE, SELECT ON SEQUENCE public.hostile_calls TO PUBLIC;

CREATE FUNCTION public.hostile_note(what text) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN
    PERFORM pg_catalog.nextval('public.hostile_calls'::pg_catalog.regclass);
    INSERT INTO public.hostile_ran (what) VALUES (what);
    RETURN true;
END $f$;

-- Operators: each gives a value off by an hour (or half the time), so that a window or a lease
-- computed with it is wrong.
CREATE FUNCTION public.hostile_times(a numeric, b integer) RETURNS numeric
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('*(numeric, integer)'); RETURN a * b + 3600::numeric * b; END $f$;
CREATE OPERATOR public.* (LEFTARG = numeric, RIGHTARG = integer, FUNCTION = public.hostile_times);

CREATE FUNCTION public.hostile_times(a numeric, b numeric) RETURNS numeric
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('*(numeric, numeric)'); RETURN a * b + 3600::numeric * b; END $f$;
CREATE OPERATOR public.* (LEFTARG = numeric, RIGHTARG = numeric, FUNCTION = public.hostile_times);

CREATE FUNCTION public.hostile_times(a bigint, b interval) RETURNS interval
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('*(bigint, interval)'); RETURN a * b / 2; END $f$;
CREATE OPERATOR public.* (LEFTARG = bigint, RIGHTARG = interval, FUNCTION = public.hostile_times);

CREATE FUNCTION public.hostile_times(a double precision, b interval) RETURNS interval
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('*(double precision, interval)'); RETURN a * b / 2; END $f$;
CREATE OPERATOR public.* (LEFTARG = double precision, RIGHTARG = interval, FUNCTION = public.hostile_times);

CREATE FUNCTION public.hostile_plus(a timestamptz, b interval) RETURNS timestamptz
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('+(timestamptz, interval)'); RETURN a + b - interval '1 hour'; END $f$;
CREATE OPERATOR public.+ (LEFTARG = timestamptz, RIGHTARG = interval, FUNCTION = public.hostile_plus);

CREATE FUNCTION public.hostile_eq(a oid, b oid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('=(oid, oid)'); RETURN a = b; END $f$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = public.hostile_eq);

CREATE FUNCTION public.hostile_eq(a name, b name) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('=(name, name)'); RETURN a = b; END $f$;
CREATE OPERATOR public.= (LEFTARG = name, RIGHTARG = name, FUNCTION = public.hostile_eq);

-- Functions.
CREATE FUNCTION public.floor(a numeric) RETURNS numeric
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('floor(numeric)'); RETURN pg_catalog.floor(a) + 3600000000; END $f$;
CREATE FUNCTION public.ceil(a numeric) RETURNS numeric
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('ceil(numeric)'); RETURN pg_catalog.ceil(a) - 3600000000; END $f$;
CREATE FUNCTION public.quote_ident(a name) RETURNS text
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('quote_ident(name)'); RETURN 'public'; END $f$;
CREATE FUNCTION public.quote_ident(a text) RETURNS text
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('quote_ident(text)'); RETURN 'public'; END $f$;
CREATE FUNCTION public.extract(a text, b timestamptz) RETURNS numeric
    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
BEGIN PERFORM public.hostile_note('extract(text, timestamptz)'); RETURN pg_catalog.extract(a, b) + 3600; END $f$;

-- Types: a domain's CHECK runs the note whenever a value is cast to it.
CREATE DOMAIN public.text AS pg_catalog.text CHECK (public.hostile_note('domain text'));
CREATE DOMAIN public.int8 AS pg_catalog.int8 CHECK (public.hostile_note('domain int8'));
CREATE DOMAIN public.int4 AS pg_catalog.int4 CHECK (public.hostile_note('domain int4'));
CREATE DOMAIN public.float8 AS pg_catalog.float8 CHECK (public.hostile_note('domain float8'));
CREATE DOMAIN public.timestamptz AS pg_catalog.timestamptz CHECK (public.hostile_note('domain timestamptz'));
CREATE DOMAIN public.name AS pg_catalog.name CHECK (public.hostile_note('domain name'));

-- Catalog relations.
CREATE VIEW public.pg_extension AS
    SELECT * FROM pg_catalog.pg_extension WHERE public.hostile_note('view pg_extension');
CREATE VIEW public.pg_namespace AS
    SELECT * FROM pg_catalog.pg_namespace WHERE public.hostile_note('view pg_namespace');
CREATE VIEW public.pg_type AS
    SELECT * FROM pg_catalog.pg_type WHERE public.hostile_note('view pg_type');

-- Comparison operators on the extension's types (xid12, rapkey): =(xid12, xid12),
-- =(rapkey, rapkey) and the other five of each, where public has none of that signature (the
-- extension's own, when it lives in public). An exact match, taken before text's for the
-- rapkey domain on any path, and before the extension's own on xid12 when public comes first
-- on the path. Each answers as the type's own would.
DO $$
DECLARE
    t pg_catalog.regtype;
    op text;
    i integer;
BEGIN
    FOREACH t IN ARRAY ARRAY(SELECT ty.oid::pg_catalog.regtype FROM pg_catalog.pg_type ty
                               JOIN pg_catalog.pg_extension e ON e.extnamespace = ty.typnamespace
                              WHERE e.extname = 'pg_idgen' AND ty.typname IN ('xid12', 'rapkey')) LOOP
        i := 0;
        FOREACH op IN ARRAY ARRAY['=', '<>', '<', '<=', '>', '>='] LOOP
            i := i + 1;
            CONTINUE WHEN EXISTS (SELECT FROM pg_catalog.pg_operator o
                                   WHERE o.oprname = op AND o.oprleft = t AND o.oprright = t
                                     AND o.oprnamespace = 'public'::pg_catalog.regnamespace);
            EXECUTE pg_catalog.format($s$
                CREATE FUNCTION public.hostile_cmp_%1$s_%2$s(a %3$s, b %3$s) RETURNS boolean
                    LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
                BEGIN
                    PERFORM public.hostile_note(%4$L);
                    RETURN a::pg_catalog.text COLLATE "C" OPERATOR(pg_catalog.%5$s) b::pg_catalog.text;
                END $f$;
                CREATE OPERATOR public.%5$s (LEFTARG = %3$s, RIGHTARG = %3$s,
                                             FUNCTION = public.hostile_cmp_%1$s_%2$s);
            $s$, (SELECT ty.typname FROM pg_catalog.pg_type ty WHERE ty.oid = t), i, t,
               pg_catalog.format('%s(%s, %s)', op, t, t), op);
        END LOOP;
    END LOOP;
END $$;

-- Overloads of the extension's own functions, when it lives in public (the default schema of
-- CREATE EXTENSION): a grant id sent as int2 or int4 matches these exactly, and the
-- extension's (bigint, bigint, ...) only through a cast. They take the writer's token and
-- answer with a window an hour longer than the server's.
DO $$
DECLARE
    t text;
BEGIN
    IF (SELECT e.extnamespace FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_idgen')
       IS DISTINCT FROM 'public'::pg_catalog.regnamespace THEN
        RETURN;
    END IF;
    FOREACH t IN ARRAY ARRAY['smallint', 'integer'] LOOP
        EXECUTE pg_catalog.format($s$
            CREATE FUNCTION public.idgen_renew(grant_id %1$s, token bigint, lease interval)
                RETURNS SETOF public.idgen_grant
                LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
            BEGIN
                PERFORM public.hostile_note('idgen_renew(%1$s, bigint, interval)');
                RETURN QUERY SELECT g.grant_id, g.token, g.kind, g.slot, g.lo, g.hi + interval '1 hour',
                                    g.epoch_ms, g.server_time
                               FROM public.idgen_renew(grant_id::bigint, token, lease) g;
            END $f$;
            CREATE FUNCTION public.idgen_release(grant_id %1$s, token bigint, last_id_time timestamptz)
                RETURNS SETOF public.idgen_grant
                LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
            BEGIN
                PERFORM public.hostile_note('idgen_release(%1$s, bigint, timestamptz)');
                RETURN QUERY SELECT * FROM public.idgen_release(grant_id::bigint, token, '-infinity');
            END $f$;
            CREATE FUNCTION public.idgen_release(grant_id %1$s, token bigint, last_id_time text)
                RETURNS SETOF public.idgen_grant
                LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog AS $f$
            BEGIN
                PERFORM public.hostile_note('idgen_release(%1$s, bigint, text)');
                RETURN QUERY SELECT * FROM public.idgen_release(grant_id::bigint, token, '-infinity');
            END $f$;
        $s$, t);
    END LOOP;
END $$;

RESET ROLE;
