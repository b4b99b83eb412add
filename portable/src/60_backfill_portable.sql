-- idgen_backfill: the native procedure and its helpers are sql/backfill.sql itself
-- (portable/README.md "Backfill"), but for its edition block, the one function that needs the
-- native library, which portable/build.py swaps for the block below: written again in
-- PL/pgSQL, with the native name, parameters and result (build.py checks the CREATE line).

-- edition block idgen_statement_timeout begin
-- Native (C, src/backfill.rs) arms PostgreSQL's statement timer for the batch about to run, and
-- 0 disarms it: inside a procedure SET statement_timeout does not re-arm the timer, and SQL
-- cannot reach it. So here the timer is a clock reading: arming notes the time and the limit in
-- a transaction-local setting, and disarming (which the procedure does when the batch, or the
-- opening checks, are done) raises native's error, 57014, when more than the limit has passed.
-- The batch is then rolled back and the run stops, as native's would: later (when the batch
-- ends, not at the limit) and with the batch's row locks held until then. A batch that fails or
-- times out on a lock rolls back its subtransaction, and the arming with it. The session's own
-- statement_timeout, armed when the CALL started, still runs for the whole CALL: see the README.
-- The setting is the caller's own (any role may set idgen_portable.* for itself): all it can
-- change is when the caller's own run stops.
CREATE FUNCTION @extschema@.idgen_statement_timeout(milliseconds integer) RETURNS void
    LANGUAGE plpgsql VOLATILE STRICT PARALLEL RESTRICTED
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    armed text[] := string_to_array(nullif(current_setting('idgen_portable.backfill_timer', true), ''), ' ');
    elapsed double precision;
BEGIN
    IF milliseconds < 0 THEN
        RAISE EXCEPTION 'statement timeout must not be negative: % ms', milliseconds
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF milliseconds > 0 THEN
        PERFORM set_config('idgen_portable.backfill_timer',
            format('%s %s', milliseconds, extract(epoch FROM clock_timestamp())), true);
        RETURN;
    END IF;
    IF armed IS NOT NULL THEN
        PERFORM set_config('idgen_portable.backfill_timer', '', true);
        elapsed := (extract(epoch FROM clock_timestamp()) - armed[2]::numeric) * 1000;
        IF elapsed > armed[1]::integer THEN
            RAISE EXCEPTION 'canceling statement due to statement timeout'
                USING ERRCODE = 'query_canceled',
                      DETAIL = format('idgen_backfill''s statement_timeout is %s ms; this part of the run took %s ms (portable edition: checked when it ends).',
                                      armed[1], round(elapsed::numeric));
        END IF;
    END IF;
END
$$;
COMMENT ON FUNCTION @extschema@.idgen_statement_timeout(integer) IS 'internal: idgen_backfill''s per-batch statement_timeout (portable edition: checked when the batch ends)';
-- edition block idgen_statement_timeout end
