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
BEGIN
    IF NOT pg_try_advisory_lock(1885956452, seq::oid::integer) THEN
        RETURN false;
    END IF;
    -- The exclusive lock blocks every generator: it must never outlive this call, errors and
    -- cancels included (a subtransaction, on this rare path only).
    BEGIN
        EXECUTE format('SELECT last_value FROM %s', seq) INTO last;
        IF target > last THEN
            PERFORM setval(seq, target, false);
        END IF;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock(1885956452, seq::oid::integer);
        RAISE;
    END;
    PERFORM pg_advisory_unlock(1885956452, seq::oid::integer);
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
