-- pg_idgen 0.2.0 -> 0.3.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.3.0'" to load this file. \quit

-- idgen_backfill (new in 0.3.0): the same objects as sql/backfill.sql.
-- Progress, one row per table, column and role, written with each batch's commit so that other
-- sessions see it while the run goes on. Everyone may read it; a role writes only its own rows.
CREATE TABLE idgen_backfill_progress (
    relation regclass NOT NULL,
    target_column name NOT NULL,
    run_by name NOT NULL,
    pid integer NOT NULL,
    started_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    reported_at timestamptz NOT NULL,
    finished_at timestamptz,
    batches bigint NOT NULL,
    rows_done bigint NOT NULL,
    rows_total bigint NOT NULL,
    rows_per_second double precision,
    eta interval,
    PRIMARY KEY (relation, target_column, run_by)
);
COMMENT ON TABLE idgen_backfill_progress IS 'progress of idgen_backfill runs: rows_total counts the rows still to fill when the run started';
ALTER TABLE idgen_backfill_progress ENABLE ROW LEVEL SECURITY;
CREATE POLICY idgen_backfill_progress_read ON idgen_backfill_progress FOR SELECT USING (true);
CREATE POLICY idgen_backfill_progress_own ON idgen_backfill_progress FOR ALL
    USING (run_by OPERATOR(pg_catalog.=) CURRENT_USER) WITH CHECK (run_by OPERATOR(pg_catalog.=) CURRENT_USER);
GRANT SELECT, INSERT, UPDATE, DELETE ON idgen_backfill_progress TO PUBLIC;

-- Arms PostgreSQL's statement timeout for the batch about to run (0 disarms it): inside a
-- procedure, SET statement_timeout does not re-arm the timer (src/backfill.rs).
CREATE FUNCTION idgen_statement_timeout(milliseconds integer) RETURNS void
    AS 'MODULE_PATHNAME', 'idgen_statement_timeout_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- The column's number in the table, or PostgreSQL's undefined-column error.
CREATE FUNCTION idgen_backfill_column(relation regclass, col text) RETURNS smallint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    num smallint;
BEGIN
    SELECT a.attnum INTO num FROM pg_attribute a
    WHERE a.attrelid = relation AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF num IS NULL THEN
        RAISE EXCEPTION 'column "%" of relation "%" does not exist', col, relation::text
            USING ERRCODE = 'undefined_column';
    END IF;
    RETURN num;
END
$$;

-- The type a domain is over (through domains over domains), or the type itself.
CREATE FUNCTION idgen_backfill_base_type(typ oid) RETURNS oid
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
    WITH RECURSIVE chain(t, depth) AS (
        SELECT typ, 0
        UNION ALL
        SELECT y.typbasetype, chain.depth + 1 FROM chain JOIN pg_type y ON y.oid = chain.t WHERE y.typtype = 'd'
    )
    SELECT t FROM chain ORDER BY depth DESC LIMIT 1
$$;

-- OPERATOR(schema.op) of the btree strategy (3 =, 4 >=, 5 >) in the default btree operator
-- class of typ (or of the type a domain is over, or one it is binary-coercible to); NULL if none.
CREATE FUNCTION idgen_backfill_operator(typ oid, strategy integer) RETURNS text
    LANGUAGE sql STABLE STRICT PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
    SELECT format('OPERATOR(%I.%s)', n.nspname, o.oprname)
    FROM pg_opclass oc
    JOIN pg_amop ao ON ao.amopfamily = oc.opcfamily AND ao.amoplefttype = oc.opcintype
         AND ao.amoprighttype = oc.opcintype AND ao.amopstrategy = strategy
    JOIN pg_operator o ON o.oid = ao.amopopr
    JOIN pg_namespace n ON n.oid = o.oprnamespace
    CROSS JOIN (SELECT @extschema@.idgen_backfill_base_type(typ) AS base) b
    WHERE oc.opcdefault AND oc.opcmethod = (SELECT am.oid FROM pg_am am WHERE am.amname = 'btree')
      AND (oc.opcintype = b.base OR EXISTS (SELECT FROM pg_cast c
           WHERE c.castsource = b.base AND c.casttarget = oc.opcintype AND c.castmethod = 'b'))
    ORDER BY oc.opcintype = b.base DESC
    LIMIT 1
$$;

-- Checks the arguments and writes the statements a run executes. A batch is two statements in
-- one transaction:
--   lock_sql takes the walk's cursor as $1 (text[], the last batch's key values; NULL walks
--     from the start) and locks up to batch_size rows whose target is NULL, in the walk's order
--     (order_by, then the primary key; or the primary key). It waits for rows that other
--     transactions hold (up to lock_timeout) rather than skip them: a skipped row filled later
--     would get a later value than the rows after it. It returns their ctids in that order (a
--     plain aggregate takes its input in order).
--   fill_sql takes those ctids as $1 and evaluates the value expression over the rows in the
--     array's order, and fills them. It is a separate statement so that its snapshot sees the
--     rows as they were when locked, after the transactions it waited for.
CREATE FUNCTION idgen_backfill_plan(relation regclass, target_column name, value_expression text,
        batch_size integer, order_by text, pause interval, lock_timeout interval,
        statement_timeout interval, report_every interval,
        OUT lock_sql text, OUT fill_sql text, OUT type_sql text, OUT remaining_sql text)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kind "char";
    rel text := relation::text;
    target text := quote_ident(target_column);
    keys name[];
    pk name[];
    key_list text;
    key_aliases text;
    cursor_cond text := NULL;
    key record;
BEGIN
    IF relation IS NULL OR target_column IS NULL OR value_expression IS NULL THEN
        RAISE EXCEPTION 'relation, target_column and value_expression must not be null'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF batch_size IS NULL OR batch_size <= 0 THEN
        RAISE EXCEPTION 'batch_size must be positive: %', coalesce(batch_size::text, 'null')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pause IS NULL OR lock_timeout IS NULL OR statement_timeout IS NULL OR report_every IS NULL
       OR least(pause, lock_timeout, statement_timeout, report_every) < interval '0' THEN
        RAISE EXCEPTION 'pause, lock_timeout, statement_timeout and report_every must be zero or more'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT c.relkind INTO kind FROM pg_class c WHERE c.oid = relation;
    IF kind = 'p' THEN
        RAISE EXCEPTION 'idgen_backfill fills one partition at a time: "%" is partitioned', rel
            USING ERRCODE = 'feature_not_supported', HINT = 'Call it for each partition.';
    ELSIF kind IS DISTINCT FROM 'r' THEN
        RAISE EXCEPTION '"%" is not a table', rel USING ERRCODE = 'wrong_object_type';
    END IF;
    PERFORM @extschema@.idgen_backfill_column(relation, target_column);

    SELECT array_agg(a.attname ORDER BY k.n) INTO pk
    FROM pg_index x
    CROSS JOIN LATERAL unnest(x.indkey::smallint[]) WITH ORDINALITY AS k(attnum, n)
    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
    WHERE x.indrelid = relation AND x.indisprimary;
    IF order_by IS NULL THEN
        IF pk IS NULL THEN
            RAISE EXCEPTION 'table "%" has no primary key to walk in batches', rel
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Pass order_by, a column to walk the table in.';
        END IF;
        keys := pk;
    ELSE
        PERFORM @extschema@.idgen_backfill_column(relation, order_by);
        -- The primary key breaks ties, so the walk's order is total.
        keys := ARRAY[order_by::name] || array(SELECT c FROM unnest(pk) c WHERE c <> order_by);
    END IF;
    IF NOT EXISTS (SELECT FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                   JOIN pg_am am ON am.oid = i.relam AND am.amname = 'btree'
                   JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
                   WHERE x.indrelid = relation AND a.attname = keys[1] AND x.indisvalid AND x.indpred IS NULL) THEN
        RAISE WARNING 'no index on "%" leads with column "%": each batch of idgen_backfill will read the whole table', rel, keys[1]
            USING HINT = format('Create one first: CREATE INDEX CONCURRENTLY ON %s (%I);', rel, keys[1]);
    END IF;
    IF target_column = ANY (keys) THEN
        RAISE EXCEPTION 'the walk cannot be ordered by the column it fills, "%"', target_column
            USING ERRCODE = 'invalid_parameter_value';
    END IF;

    -- The cursor condition, written out per column with each type's default btree operators
    -- (so it matches ORDER BY and needs nobody's search_path), from the last key column back:
    --   k1 >= c1 AND (k1 > c1 OR (k1 = c1 AND (k2 > c2 OR (k2 = c2 AND (k3 >= c3)))))
    -- Its leading k1 >= c1 lets an index on k1 start the scan at the cursor.
    FOR key IN
        SELECT k.col, k.n, format_type(a.atttypid, a.atttypmod) AS typ,
               @extschema@.idgen_backfill_operator(a.atttypid, 3) AS eq, @extschema@.idgen_backfill_operator(a.atttypid, 4) AS ge,
               @extschema@.idgen_backfill_operator(a.atttypid, 5) AS gt
        FROM unnest(keys) WITH ORDINALITY AS k(col, n)
        JOIN pg_attribute a ON a.attrelid = relation AND a.attname = k.col
        ORDER BY k.n DESC
    LOOP
        IF key.ge IS NULL OR key.gt IS NULL OR key.eq IS NULL THEN
            RAISE EXCEPTION 'cannot walk "%" in the order of column "%": type % has no default btree ordering',
                rel, key.col, key.typ USING ERRCODE = 'undefined_function';
        END IF;
        IF cursor_cond IS NULL THEN
            cursor_cond := format('%I %s ($1)[%s]::%s', key.col, key.ge, key.n, key.typ);
        ELSE
            cursor_cond := format('(%1$I %2$s ($1)[%5$s]::%6$s OR (%1$I %3$s ($1)[%5$s]::%6$s AND (%4$s)))',
                key.col, key.gt, key.eq, cursor_cond, key.n, key.typ);
            IF key.n = 1 THEN
                cursor_cond := format('%I %s ($1)[1]::%s AND %s', key.col, key.ge, key.typ, cursor_cond);
            END IF;
        END IF;
    END LOOP;

    SELECT string_agg(quote_ident(k), ', ' ORDER BY n),
           string_agg(format('%s.%I AS idgen_k%s', rel, k, n), ', ' ORDER BY n)
    INTO key_list, key_aliases
    FROM unnest(keys) WITH ORDINALITY AS u(k, n);

    lock_sql := format($sql$
SELECT pg_catalog.array_agg(idgen_row) FROM (
    SELECT ctid AS idgen_row FROM %1$s
    WHERE %2$s IS NULL AND ($1 IS NULL OR %3$s)
    ORDER BY %4$s LIMIT %5$s
    FOR NO KEY UPDATE) idgen_locked$sql$,
        rel, target, cursor_cond, key_list, batch_size);
    fill_sql := format($sql$
WITH idgen_valued AS MATERIALIZED (
    SELECT %1$s.ctid AS idgen_row, idgen_locked.idgen_n, (%3$s) AS idgen_value, %4$s
    FROM pg_catalog.unnest($1) WITH ORDINALITY AS idgen_locked(idgen_tid, idgen_n)
    JOIN %1$s ON %1$s.ctid OPERATOR(pg_catalog.=) idgen_locked.idgen_tid
    ORDER BY idgen_locked.idgen_n
), idgen_updated AS (
    UPDATE %1$s SET %2$s = idgen_valued.idgen_value FROM idgen_valued
    WHERE %1$s.ctid OPERATOR(pg_catalog.=) idgen_valued.idgen_row
    RETURNING 1
)
SELECT (SELECT pg_catalog.count(*) FROM idgen_updated),
       (SELECT pg_catalog.count(*) FROM idgen_valued WHERE idgen_value IS NULL),
       (SELECT ARRAY[%5$s] FROM idgen_valued ORDER BY idgen_n DESC LIMIT 1)$sql$,
        rel, target, value_expression, key_aliases,
        (SELECT string_agg(format('idgen_k%s::text', n), ', ' ORDER BY n) FROM generate_subscripts(keys, 1) n));
    -- The value expression's type, without evaluating it.
    type_sql := format('SELECT pg_catalog.pg_typeof((SELECT (%s) FROM %s LIMIT 0))', value_expression, rel);
    remaining_sql := format('SELECT pg_catalog.count(*) FROM %s WHERE %s IS NULL', rel, target);
END
$$;

-- Runs a batch's lock_sql. Keyset pagination only pays off when the batch walks an index from
-- the cursor; right after ADD COLUMN the planner knows nothing of the new column's NULLs and
-- would rather read and sort the whole table for each batch. Here it cannot.
CREATE FUNCTION idgen_backfill_lock(lock_sql text, cursor_key text[]) RETURNS tid[]
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    SET enable_seqscan = off
    SET enable_sort = off
AS $$
DECLARE
    locked tid[];
BEGIN
    EXECUTE lock_sql INTO locked USING cursor_key;
    RETURN locked;
END
$$;

-- Runs a batch's fill_sql. Its rows are reached by ctid, one by one: a nested loop over the
-- array. Costed as random reads, 5000 ctids look dearer than reading the whole table, so the
-- planner would hash-join a full scan for every batch; here it cannot. No SET search_path: the
-- statement holds the caller's value expression (everything else in it is qualified).
CREATE FUNCTION idgen_backfill_fill(fill_sql text, locked tid[],
        OUT filled bigint, OUT nulls bigint, OUT last_key text[])
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET enable_hashjoin = off
    SET enable_mergejoin = off
AS $$
BEGIN
    EXECUTE fill_sql INTO filled, nulls, last_key USING locked;
END
$$;

-- An error unless a value of type value_type can be stored in the target column the way
-- UPDATE would without an explicit cast: the same type, the domain's base type, or an implicit cast.
CREATE FUNCTION idgen_backfill_check_type(relation regclass, target_column name, value_type regtype) RETURNS void
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col_type oid;
    base_type oid;
BEGIN
    SELECT a.atttypid INTO col_type FROM pg_attribute a
    WHERE a.attrelid = relation AND a.attname = target_column AND NOT a.attisdropped;
    base_type := @extschema@.idgen_backfill_base_type(col_type);
    IF value_type NOT IN (col_type, base_type) AND NOT EXISTS (
            SELECT FROM pg_cast c WHERE c.castsource = value_type
            AND c.casttarget IN (col_type, base_type) AND c.castcontext = 'i') THEN
        RAISE EXCEPTION 'column "%" is of type % but value_expression is of type %',
            target_column, format_type(col_type, NULL), format_type(value_type, NULL)
            USING ERRCODE = 'datatype_mismatch';
    END IF;
END
$$;

-- Starts (or restarts) the run's progress row; returns the number of rows to fill.
CREATE FUNCTION idgen_backfill_begin(relation regclass, target_column name, remaining_sql text) RETURNS bigint
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    total bigint;
    now timestamptz := clock_timestamp();
BEGIN
    EXECUTE remaining_sql INTO total;
    INSERT INTO @extschema@.idgen_backfill_progress AS p
        (relation, target_column, run_by, pid, started_at, updated_at, reported_at, batches, rows_done, rows_total)
    VALUES (relation, target_column, CURRENT_USER, pg_backend_pid(), now, now, now, 0, 0, total)
    ON CONFLICT ON CONSTRAINT idgen_backfill_progress_pkey DO UPDATE SET
        pid = excluded.pid, started_at = now, updated_at = now, reported_at = now, finished_at = NULL,
        batches = 0, rows_done = 0, rows_total = total, rows_per_second = NULL, eta = NULL;
    RETURN total;
END
$$;

-- Records one batch's outcome and says what the run does next:
--   'next'  the batch filled rows: commit, move the cursor to its last key, pause
--   'sweep' a walk reached the end: walk once more from the start, for rows that came in
--           behind the cursor or whose order_by value is NULL
--   'retry' the batch hit lock_timeout: wait a moment and retry it
--   'done'  a walk from the start found no row to fill
CREATE FUNCTION idgen_backfill_step(relation regclass, target_column name,
        filled bigint, nulls bigint, from_start boolean, lock_failures integer, report_every interval)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    progress @extschema@.idgen_backfill_progress;
    now timestamptz := clock_timestamp();
    action text;
BEGIN
    IF nulls > 0 THEN
        RAISE EXCEPTION 'value_expression gave NULL for % rows of "%"', nulls, relation::text
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = 'The batch was rolled back; the batches before it stay committed.',
                  HINT = 'Make the expression give a value for every row, e.g. with coalesce.';
    END IF;
    IF lock_failures > 0 THEN
        IF lock_failures >= 20 THEN
            RAISE EXCEPTION 'idgen_backfill gave up on "%" after % lock timeouts in a row', relation::text, lock_failures
                USING ERRCODE = 'lock_not_available',
                      HINT = 'Call it again when the lock is free; it continues where it stopped.';
        END IF;
        RETURN 'retry';
    END IF;
    IF filled > 0 THEN
        action := 'next';
    ELSIF NOT from_start THEN
        RETURN 'sweep';
    ELSE
        action := 'done';
    END IF;

    -- In SET, columns are the values before this batch.
    UPDATE @extschema@.idgen_backfill_progress AS p SET
        batches = p.batches + (filled > 0)::integer,
        rows_done = p.rows_done + filled,
        rows_total = greatest(p.rows_total, p.rows_done + filled),
        rows_per_second = (p.rows_done + filled) / nullif(extract(epoch FROM now - p.started_at), 0),
        eta = make_interval(secs => round((greatest(p.rows_total, p.rows_done + filled) - p.rows_done - filled)
              / nullif((p.rows_done + filled) / nullif(extract(epoch FROM now - p.started_at), 0), 0))),
        updated_at = now,
        finished_at = CASE WHEN action = 'done' THEN now END,
        reported_at = CASE WHEN action = 'done' OR now - p.reported_at >= report_every THEN now ELSE p.reported_at END
    WHERE p.relation = idgen_backfill_step.relation AND p.target_column = idgen_backfill_step.target_column
      AND p.run_by = CURRENT_USER
    RETURNING p.* INTO progress;
    IF progress.reported_at = now THEN
        RAISE NOTICE 'idgen_backfill %.%: % of % rows%', relation::text, quote_ident(target_column),
            progress.rows_done, progress.rows_total,
            CASE WHEN action = 'done' THEN format(' in %s s, done', round(extract(epoch FROM now - progress.started_at), 1))
                 ELSE format(', %s rows/s, about %s left', round(progress.rows_per_second), progress.eta) END;
    END IF;
    RETURN action;
END
$$;

CREATE PROCEDURE idgen_backfill(relation regclass, target_column name, value_expression text,
        batch_size integer DEFAULT 5000, order_by text DEFAULT NULL,
        pause interval DEFAULT '0', lock_timeout interval DEFAULT '500ms',
        statement_timeout interval DEFAULT '1min', report_every interval DEFAULT '10s')
    LANGUAGE plpgsql
AS $$
DECLARE
    plan record;
    value_type regtype;
    cursor_key text[];
    locked tid[];
    last_key text[];
    filled bigint;
    nulls bigint;
    lock_failures integer := 0;
    action text;
    lock_ms text := pg_catalog.format('%s ms', pg_catalog.floor(pg_catalog.date_part('epoch', lock_timeout) OPERATOR(pg_catalog.*) 1000));
    batch_ms integer := pg_catalog.floor(pg_catalog.date_part('epoch', statement_timeout) OPERATOR(pg_catalog.*) 1000);
BEGIN
    -- From here on statement_timeout is the procedure's: for the checks and the count below,
    -- then for each batch (the session's own would cancel the whole CALL).
    PERFORM @extschema@.idgen_statement_timeout(batch_ms);
    SELECT * INTO plan FROM @extschema@.idgen_backfill_plan(relation, target_column, value_expression,
        batch_size, order_by, pause, lock_timeout, statement_timeout, report_every);
    -- The caller's expression, under the caller's search_path: its type, then both batch
    -- statements planned (unknown columns, generated columns, privileges) before any row changes.
    EXECUTE plan.type_sql INTO value_type;
    PERFORM @extschema@.idgen_backfill_check_type(relation, target_column, value_type);
    EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) plan.lock_sql USING cursor_key;
    EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) plan.fill_sql USING locked;
    PERFORM @extschema@.idgen_backfill_begin(relation, target_column, plan.remaining_sql);
    COMMIT;
    LOOP
        BEGIN
            PERFORM pg_catalog.set_config('lock_timeout', lock_ms, true);
            PERFORM @extschema@.idgen_statement_timeout(batch_ms);
            locked := @extschema@.idgen_backfill_lock(plan.lock_sql, cursor_key);
            filled := 0;
            nulls := 0;
            IF locked IS NOT NULL THEN
                SELECT * INTO filled, nulls, last_key FROM @extschema@.idgen_backfill_fill(plan.fill_sql, locked);
            END IF;
            PERFORM @extschema@.idgen_statement_timeout(0);
            lock_failures := 0;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM @extschema@.idgen_statement_timeout(0);
            lock_failures := lock_failures OPERATOR(pg_catalog.+) 1;
        END;
        action := @extschema@.idgen_backfill_step(relation, target_column,
            filled, nulls, cursor_key IS NULL, lock_failures, report_every);
        COMMIT;
        IF action OPERATOR(pg_catalog.=) 'next' THEN
            cursor_key := last_key;
            PERFORM pg_catalog.pg_sleep_for(pause);
        ELSIF action OPERATOR(pg_catalog.=) 'sweep' THEN
            cursor_key := NULL;
        ELSIF action OPERATOR(pg_catalog.=) 'done' THEN
            EXIT;
        ELSE -- 'retry'
            PERFORM pg_catalog.pg_sleep(0.1);
        END IF;
    END LOOP;
END
$$;
COMMENT ON PROCEDURE idgen_backfill(regclass, name, text, integer, text, interval, interval, interval, interval) IS
    'fills target_column with value_expression where it is NULL, in batches walked by order_by or the primary key, one commit per batch; resumable';
-- end of idgen_backfill
