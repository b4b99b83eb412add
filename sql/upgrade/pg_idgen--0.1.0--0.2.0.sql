-- pg_idgen 0.1.0 -> 0.2.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.0'" to load this file. \quit

-- The library keeps every C symbol that 0.1.0's catalog entries name, and adds soft input
-- errors to xid12_in on PostgreSQL 16 and later.

-- The SQL-language and PL/pgSQL functions no longer depend on the caller's search_path: each
-- is the same as in a fresh 0.2.0 install (sql/rapkey.sql).
CREATE OR REPLACE FUNCTION @extschema@.rapkey_has_prefix(key @extschema@.rapkey, prefix text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN key OPERATOR(pg_catalog.>=) @extschema@.rapkey_prefix_lo(prefix)
       AND key OPERATOR(pg_catalog.<) @extschema@.rapkey_prefix_hi(prefix);

CREATE OR REPLACE FUNCTION @extschema@.rapkey_next(prefix text) RETURNS @extschema@.rapkey
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p text := @extschema@.rapkey_normalize_prefix(prefix);
    n bigint;
BEGIN
    INSERT INTO @extschema@.rapkey_counter AS c (prefix, last_value) VALUES (p, 1)
    ON CONFLICT ON CONSTRAINT rapkey_counter_pkey DO UPDATE SET last_value = c.last_value + 1
    RETURNING c.last_value INTO n;
    RETURN @extschema@.rapkey_build(split_part(p, '.', 1),
        VARIADIC (string_to_array(p, '.'))[2:] || n::text);
END
$$;
