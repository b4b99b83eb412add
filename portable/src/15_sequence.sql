-- The clock-following sequences (xid12 and Snowflake): docs/portable.md "Uniqueness: the
-- sequence design" and portable/README.md "Security".
--
-- Each generator has one sequence whose value carries (time << bits | counter). Only the
-- installing role has rights on it. Callers reach it through the generators, which are its
-- gates: gen_xid12(), gen_xid12(timestamptz) and gen_snowflake() are SECURITY DEFINER, owned by
-- the installing role, EXECUTE granted by it (never to PUBLIC). What a gate does to the sequence
-- depends on nothing of the session (no setting, no argument): one nextval(), and a jump whose
-- target is the clock.
--
-- A jump moves the sequence forward to the clock: it reads last_value and, when the target is
-- larger, setval()s it. Between the read and the setval() another session's nextval() may take
-- a value; if that value reached the target, setval() would hand it out again. No lock keeps
-- those nextval() calls out: every lock a gate could take on every call is one that any role
-- can take too (advisory locks by key; ROW EXCLUSIVE on any relation by its oid, through the
-- sequence functions, whose error leaves it held in a caught subtransaction), and a stranger
-- holding it would stop the generators. Instead each generator has a second sequence, its
-- jump count (idgen_*_jumps): odd while a jump is open, between its read and its setval().
--   A jump, holding the generator's jumper table in SHARE UPDATE EXCLUSIVE mode (only one jump
--   at a time; the mode no role without rights on that table can hold: LOCK TABLE needs them,
--   and ROW EXCLUSIVE, what a stranger can hold, does not conflict with it): sets the count to
--   the next odd number, reads last_value, setval()s to the target when it is larger, sets the
--   count to the next even number, and takes its own nextval() before it lets the lock go.
--   A gate: reads the count (j), takes nextval(), reads the count again; the value is used
--   only when both reads are the same even number: then no jump was open at any moment between
--   them, so the nextval() did not fall between a jump's read and its setval(). Otherwise the
--   value is dropped (a gap in the sequence) and the gate takes one under the jumper lock
--   (idgen_sequence_jump with wait), where no jump is open.
-- Why no two calls return the same value: a value is returned only when no jump was open while
-- it was taken, or by a jump holding the jumper lock after its setval(); a jump's setval()
-- target is larger than the last_value it read after opening, and that is at least every value
-- returned before the jump opened (values only grow outside open jumps). So the values returned
-- are distinct and, in the order they were taken, increasing.
-- A jump cut short (an error or a cancel between its two settings of the count) leaves the
-- count odd: the gates take their values under the jumper lock until the next jump, which
-- closes it (the lock is free, so the cut jump is over). The jumper lock is a transaction-level
-- lock taken inside a PL/pgSQL block with a handler (a subtransaction) that always ends by
-- raising 'IDG00' (caught by its own handler): PostgreSQL releases it in the subtransaction's
-- abort, whatever ended it (this RAISE, an error, a cancel landing anywhere inside). nextval()
-- and setval() are not transactional: the abort keeps their effect, and the PL/pgSQL variables
-- keep the values assigned in the block.

CREATE SEQUENCE @extschema@.idgen_xid12_jumps AS bigint MINVALUE 0 START 0 NO CYCLE CACHE 1;
CREATE SEQUENCE @extschema@.idgen_snowflake_jumps AS bigint MINVALUE 0 START 0 NO CYCLE CACHE 1;
SELECT pg_catalog.setval('@extschema@.idgen_xid12_jumps'::pg_catalog.regclass, 0, true),
       pg_catalog.setval('@extschema@.idgen_snowflake_jumps'::pg_catalog.regclass, 0, true);
-- The jumper locks: empty tables nobody else has rights on, locked by the jumps only.
CREATE TABLE @extschema@.idgen_xid12_jumper ();
CREATE TABLE @extschema@.idgen_snowflake_jumper ();
COMMENT ON TABLE @extschema@.idgen_xid12_jumper IS 'pg_idgen portable: locked (SHARE UPDATE EXCLUSIVE) by a jump of the xid12 sequence; no rows';
COMMENT ON TABLE @extschema@.idgen_snowflake_jumper IS 'pg_idgen portable: locked (SHARE UPDATE EXCLUSIVE) by a jump of the Snowflake sequence; no rows';

-- Moves the generator sequence seq forward to target (never back), under its jumper lock, and
-- returns a value nextval() took under that lock; closes a jump left open. wait false: NULL
-- when another jump holds the lock. wait true: waits for it, at most 2 s (lock_timeout, for
-- this function only; only the gates take it, each for microseconds), then 55P03. target 0:
-- only a value taken where no jump is open.
-- Runs inside a gate only (as the owner): EXECUTE is not granted to anyone.
CREATE FUNCTION @extschema@.idgen_sequence_jump(seq regclass, jumps regclass, jumper regclass,
                                                target bigint, wait boolean) RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    SET lock_timeout = 2000
AS $$
DECLARE
    v bigint;
    j bigint;
    last bigint;
BEGIN
    -- The block always ends in an abort, which releases the lock (see the top of this file).
    BEGIN
        IF wait THEN
            EXECUTE pg_catalog.format('LOCK TABLE %s IN SHARE UPDATE EXCLUSIVE MODE', jumper);
        ELSE
            EXECUTE pg_catalog.format('LOCK TABLE %s IN SHARE UPDATE EXCLUSIVE MODE NOWAIT', jumper);
        END IF;
        j := coalesce(pg_catalog.pg_sequence_last_value(jumps), 0);
        -- last_value: pg_sequence_last_value gives NULL when the next nextval() returns it
        -- (after a setval(..., false) of a jump cut short, or a new sequence); read it then.
        last := pg_catalog.pg_sequence_last_value(seq);
        IF last IS NULL THEN
            EXECUTE pg_catalog.format('SELECT last_value FROM %s', seq) INTO last;
        END IF;
        IF target > last THEN
            j := j + 1 + (j & 1);                      -- open (odd)
            PERFORM pg_catalog.setval(jumps, j, true);
            last := pg_catalog.pg_sequence_last_value(seq);
            IF last IS NULL THEN
                EXECUTE pg_catalog.format('SELECT last_value FROM %s', seq) INTO last;
            END IF;
            IF target > last THEN
                PERFORM pg_catalog.setval(seq, target, false);
            END IF;
            PERFORM pg_catalog.setval(jumps, j + 1, true); -- closed (even)
        ELSIF (j & 1) = 1 THEN
            PERFORM pg_catalog.setval(jumps, j + 1, true); -- a jump cut short: closed
        END IF;
        v := pg_catalog.nextval(seq);
        RAISE SQLSTATE 'IDG00';
    EXCEPTION WHEN SQLSTATE 'IDG00' THEN
        NULL;
    WHEN lock_not_available THEN
        IF wait THEN
            RAISE EXCEPTION 'could not move the generator sequence % to the clock: another jump held its lock for 2 s', seq
                USING ERRCODE = 'lock_not_available',
                      HINT = 'Only the generators take it, for microseconds: a server too busy to run them?';
        END IF;
    END;
    RETURN v;
END
$$;
REVOKE EXECUTE ON FUNCTION @extschema@.idgen_sequence_jump(regclass, regclass, regclass, bigint, boolean) FROM PUBLIC;
COMMENT ON FUNCTION @extschema@.idgen_sequence_jump(regclass, regclass, regclass, bigint, boolean) IS 'moves a generator sequence forward to target, never back, and takes a value under its jumper lock; called by the gates only';
