-- Runs first: the extension, and helpers the other tests share.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
CREATE SCHEMA test_helpers;
-- Reports the SQLSTATE and message of a statement's error, or 'ok'.
CREATE FUNCTION test_helpers.error_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'ok';
EXCEPTION WHEN others THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
-- The lines of a statement's EXPLAIN (COSTS OFF), trimmed, for tests that check one part.
CREATE FUNCTION test_helpers.plan_lines(statement text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || statement LOOP
        RETURN NEXT btrim(line);
    END LOOP;
END $$;
