-- The clock-following sequences (xid12 and Snowflake), portable/README.md "Uniqueness".
--
-- Each generator has one sequence whose value carries (time << bits | counter). A call takes
-- nextval() while holding a SHARED advisory lock on (1885956452, the sequence's oid), and
-- releases it at once. When the value's time is behind the clock, the caller moves the
-- sequence forward with idgen_sequence_jump, which holds the same lock EXCLUSIVELY (tried, not
-- waited for: a busy lock means someone else is jumping or taking a value, and the value taken
-- is used as it is). Under the exclusive lock no nextval() runs, so reading last_value and
-- setval() to a larger target is atomic: the sequence never moves back, and nextval() never
-- returns a value twice.
CREATE FUNCTION @extschema@.idgen_sequence_jump(seq regclass, target bigint) RETURNS boolean
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    last bigint;
    locked boolean := false;
BEGIN
    -- The exclusive lock blocks every generator: it must never outlive this call, errors and
    -- cancels included. So it is taken inside the block whose handler releases it (a
    -- subtransaction, on this rare path only); PL/pgSQL services a cancel between statements,
    -- never inside the assignment that takes it.
    BEGIN
        locked := pg_try_advisory_lock(1885956452, seq::oid::integer);
        IF NOT locked THEN
            RETURN false;
        END IF;
        EXECUTE format('SELECT last_value FROM %s', seq) INTO last;
        IF target > last THEN
            PERFORM setval(seq, target, false);
        END IF;
        locked := NOT pg_advisory_unlock(1885956452, seq::oid::integer);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        IF locked THEN
            PERFORM pg_advisory_unlock(1885956452, seq::oid::integer);
        END IF;
        RAISE;
    END;
    RETURN true;
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_sequence_jump(regclass, bigint) IS 'moves a generator sequence forward to target, never back (false: busy, skipped)';

-- Checked once per session before a generator takes its first lock: a nextval() or setval()
-- refused for lack of rights while holding the lock would leave it held.
CREATE FUNCTION @extschema@.idgen_sequence_rights(seq regclass, what text) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT has_sequence_privilege(seq, 'USAGE') OR NOT has_sequence_privilege(seq, 'UPDATE') THEN
        RAISE EXCEPTION 'permission denied for sequence %', seq
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('%s() needs USAGE and UPDATE on %s.', what, seq),
                  HINT = format('GRANT USAGE, UPDATE ON SEQUENCE %s TO %I;', seq, current_user);
    END IF;
END
$$;
