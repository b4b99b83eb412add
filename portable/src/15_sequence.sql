-- The clock-following sequences (xid12 and Snowflake), portable/README.md "Uniqueness" and
-- "Security".
--
-- Each generator has one sequence whose value carries (time << bits | counter). Only the
-- installing role has rights on it. Callers reach it through the generators, which are its
-- gates: gen_xid12(), gen_xid12(timestamptz) and gen_snowflake() are SECURITY DEFINER, owned by
-- the installing role, EXECUTE granted by it (never to PUBLIC). A gate takes
-- nextval() while holding a SHARED advisory lock on (1885956452, the sequence's oid), and when
-- the value's time is behind the clock moves the sequence forward with idgen_sequence_jump,
-- which holds the same lock EXCLUSIVELY (tried first: a busy lock means someone else is jumping
-- or taking a value, and the value taken is used as it is, unless it lags the clock by more
-- than the gate's bound: then idgen_sequence_jump_wait waits for it).
-- Under the exclusive lock no nextval() runs, so reading last_value and setval() to a larger
-- target is atomic: the sequence never moves back, and nextval() never returns a value twice.
-- What a gate does to the sequence depends on nothing of the session (no setting, no argument):
-- one nextval(), and a jump whose target is the clock. The session's cache (idgen_portable.*,
-- which the caller can set) only shapes the id it returns to that caller.
--
-- How a lock never outlives its use, errors and cancels included (portable/README.md "What a
-- crash or a failover can do"): every lock is a TRANSACTION-level advisory lock taken inside a
-- PL/pgSQL block with a handler, i.e. a subtransaction, and every such block ends by raising
-- 'IDG00' (caught by its own handler) after its work. PostgreSQL releases the locks a
-- subtransaction took when it aborts, in its abort processing, whatever ended it: this RAISE,
-- an error, or a cancel landing anywhere inside (or in the handler, which runs after the
-- release). No PL/pgSQL statement releases a lock, so there is no window between taking a lock
-- and recording it to be released. nextval() and setval() are not transactional: the abort
-- keeps their effect, and the PL/pgSQL variables keep the values assigned in the block.
-- (A block that returned normally would hand its locks to the calling transaction, to its end.)

-- Runs inside a gate only (as the owner): EXECUTE is not granted to anyone.
CREATE FUNCTION @extschema@.idgen_sequence_jump(seq regclass, target bigint) RETURNS boolean
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    last bigint;
    moved boolean := false;
BEGIN
    -- The block always ends in an abort, which releases the lock (see the top of this file).
    BEGIN
        IF pg_catalog.pg_try_advisory_xact_lock(1885956452, seq::pg_catalog.oid::integer) THEN
            EXECUTE pg_catalog.format('SELECT last_value FROM %s', seq) INTO last;
            IF target > last THEN
                PERFORM pg_catalog.setval(seq, target, false);
            END IF;
            moved := true;
        END IF;
        RAISE SQLSTATE 'IDG00';
    EXCEPTION WHEN SQLSTATE 'IDG00' THEN
        NULL;
    END;
    RETURN moved;
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_sequence_jump(regclass, bigint) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.idgen_sequence_jump(regclass, bigint) IS 'moves a generator sequence forward to target, never back (false: busy, skipped); called by the gates only';

-- The exclusive lock, waited for: the gates call this when a value lags the clock by more than
-- their bound (portable/README.md "Uniqueness", "How far behind the clock") and the tried jump
-- found the lock busy. A jump holds it for microseconds and a gate's nextval() holds it shared
-- for less; waiting in the lock's queue also holds back new shared takers, so the wait ends
-- once the holders of the moment are done. But any role can take an advisory lock, so the wait
-- is bounded (lock_timeout, for this function only) and the sessions that hold it longer are
-- named in the error. As in idgen_sequence_jump, the block always ends in an abort, which
-- releases the lock.
-- Runs inside a gate only (as the owner): EXECUTE is not granted to anyone.
CREATE FUNCTION @extschema@.idgen_sequence_jump_wait(seq regclass, target bigint) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    SET lock_timeout = 2000
AS $$
DECLARE
    last bigint;
    holders text;
BEGIN
    BEGIN
        PERFORM pg_catalog.pg_advisory_xact_lock(1885956452, seq::pg_catalog.oid::integer);
        EXECUTE pg_catalog.format('SELECT last_value FROM %s', seq) INTO last;
        IF target > last THEN
            PERFORM pg_catalog.setval(seq, target, false);
        END IF;
        RAISE SQLSTATE 'IDG00';
    EXCEPTION WHEN SQLSTATE 'IDG00' THEN
        RETURN;
    WHEN lock_not_available THEN
        SELECT pg_catalog.string_agg(DISTINCT l.pid::text, ', ') INTO holders FROM pg_catalog.pg_locks l
         WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
           AND l.classid = 1885956452 AND l.objid = seq::pg_catalog.oid AND l.objsubid = 2
           AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database());
        RAISE EXCEPTION 'could not move the generator sequence % to the clock: its lock is held by another session', seq
            USING ERRCODE = 'lock_not_available',
                  DETAIL = pg_catalog.format('Advisory lock (1885956452, %s) is held by backend %s.', seq::pg_catalog.oid::integer, holders),
                  HINT = 'The generators hold it for microseconds: end that session.';
    END;
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_sequence_jump_wait(regclass, bigint) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.idgen_sequence_jump_wait(regclass, bigint) IS 'moves a generator sequence forward to target, never back, waiting up to 2 s for the lock; called by the gates only';

-- The shared lock, when its first try failed: someone holds it exclusively (a jump) or waits
-- for it so (idgen_sequence_jump_wait). Both last microseconds; but any role can take an
-- advisory lock, so the wait is bounded (lock_timeout, for this function only) and a session
-- that holds it longer is named in the error instead of blocking every generator for good.
-- Takes it at transaction level, so it belongs to the caller's block (idgen_sequence_next),
-- whose abort releases it; this function's own block (for its handler) commits when the lock
-- is taken, handing the lock to the caller's.
-- Runs inside a gate only (as the owner): EXECUTE is not granted to anyone.
CREATE FUNCTION @extschema@.idgen_sequence_wait(seq regclass) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    SET lock_timeout = 2000
AS $$
DECLARE
    holders text;
BEGIN
    PERFORM pg_catalog.pg_advisory_xact_lock_shared(1885956452, seq::pg_catalog.oid::integer);
EXCEPTION WHEN lock_not_available THEN
    -- The exclusive holder; or, when a jump waits in the queue, those it waits for.
    SELECT pg_catalog.string_agg(DISTINCT l.pid::text, ', ') INTO holders FROM pg_catalog.pg_locks l
     WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_catalog.pg_backend_pid()
       AND l.classid = 1885956452 AND l.objid = seq::pg_catalog.oid AND l.objsubid = 2
       AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d WHERE d.datname = pg_catalog.current_database());
    RAISE EXCEPTION 'could not take the generator lock of %: it is held exclusively by another session', seq
        USING ERRCODE = 'lock_not_available',
              DETAIL = pg_catalog.format('Advisory lock (1885956452, %s) is held by backend %s.', seq::pg_catalog.oid::integer, holders),
              HINT = 'Only a generator''s jump takes it exclusively, for microseconds: end that session.';
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_sequence_wait(regclass) FROM PUBLIC;

-- The slow path of a gate's nextval(): when the shared lock was busy at its first try (someone
-- jumps), and after a jump. It waits for the lock (idgen_sequence_wait) and takes nextval();
-- its block always ends in an abort, which releases the lock, as the gates' fast path does
-- (portable/README.md "Uniqueness").
-- Runs inside a gate only (as the owner): EXECUTE is not granted to anyone.
CREATE FUNCTION @extschema@.idgen_sequence_next(seq regclass) RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v bigint;
BEGIN
    BEGIN
        IF NOT pg_catalog.pg_try_advisory_xact_lock_shared(1885956452, seq::pg_catalog.oid::integer) THEN
            PERFORM @extschema@.idgen_sequence_wait(seq);
        END IF;
        v := pg_catalog.nextval(seq);
        RAISE SQLSTATE 'IDG00';
    EXCEPTION WHEN SQLSTATE 'IDG00' THEN
        NULL;
    END;
    RETURN v;
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_sequence_next(regclass) FROM PUBLIC;
