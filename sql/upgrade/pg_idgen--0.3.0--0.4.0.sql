-- pg_idgen 0.3.0 -> 0.4.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.4.0'" to load this file. \quit

-- idgen_backfill no longer depends on the caller's search_path for anything but the caller's
-- value expression: the statements it writes name the table and the cursor's types with their
-- schemas, the casts of the cursor's key values to text are qualified, and the procedure's
-- variables have qualified types.
-- An unknown order_by column is quoted to at most 40 characters in its error. Each object is
-- the same as in a fresh 0.4.0 install (sql/backfill.sql).

CREATE OR REPLACE FUNCTION idgen_backfill_column(relation regclass, col text) RETURNS smallint
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    num smallint;
BEGIN
    SELECT a.attnum INTO num FROM pg_attribute a
    WHERE a.attrelid = relation AND a.attname = col AND a.attnum > 0 AND NOT a.attisdropped;
    IF num IS NULL THEN
        -- A column name is at most 63 bytes, but col can be any text: quote at most 40 characters.
        RAISE EXCEPTION 'column % of relation "%" does not exist',
            CASE WHEN length(col) > 40 THEN format('"%s..." (%s characters)', left(col, 40), length(col))
                 ELSE format('"%s"', col) END,
            relation::text
            USING ERRCODE = 'undefined_column';
    END IF;
    RETURN num;
END
$$;

CREATE OR REPLACE FUNCTION idgen_backfill_plan(relation regclass, target_column name, value_expression text,
        batch_size integer, order_by text, pause interval, lock_timeout interval,
        statement_timeout interval, report_every interval,
        OUT lock_sql text, OUT fill_sql text, OUT type_sql text, OUT remaining_sql text)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kind "char";
    rel text := relation::text; -- for messages
    qualified text; -- for statements
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
    -- Always schema-qualified (pg_temp_N for a temporary table): the batch statement runs under
    -- the caller's search_path, where an unqualified name could mean another table.
    SELECT c.relkind, format('%I.%I', n.nspname, c.relname) INTO kind, qualified
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation;
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
               format('%I.%I', tn.nspname, t.typname) AS qualified_typ,
               @extschema@.idgen_backfill_operator(a.atttypid, 3) AS eq, @extschema@.idgen_backfill_operator(a.atttypid, 4) AS ge,
               @extschema@.idgen_backfill_operator(a.atttypid, 5) AS gt
        FROM unnest(keys) WITH ORDINALITY AS k(col, n)
        JOIN pg_attribute a ON a.attrelid = relation AND a.attname = k.col
        JOIN pg_type t ON t.oid = a.atttypid
        JOIN pg_namespace tn ON tn.oid = t.typnamespace
        ORDER BY k.n DESC
    LOOP
        IF key.ge IS NULL OR key.gt IS NULL OR key.eq IS NULL THEN
            RAISE EXCEPTION 'cannot walk "%" in the order of column "%": type % has no default btree ordering',
                rel, key.col, key.typ USING ERRCODE = 'undefined_function';
        END IF;
        IF cursor_cond IS NULL THEN
            cursor_cond := format('%I %s ($1)[%s]::%s', key.col, key.ge, key.n, key.qualified_typ);
        ELSE
            cursor_cond := format('(%1$I %2$s ($1)[%5$s]::%6$s OR (%1$I %3$s ($1)[%5$s]::%6$s AND (%4$s)))',
                key.col, key.gt, key.eq, cursor_cond, key.n, key.qualified_typ);
            IF key.n = 1 THEN
                cursor_cond := format('%I %s ($1)[1]::%s AND %s', key.col, key.ge, key.qualified_typ, cursor_cond);
            END IF;
        END IF;
    END LOOP;

    SELECT string_agg(quote_ident(k), ', ' ORDER BY n),
           string_agg(format('%s.%I AS idgen_k%s', qualified, k, n), ', ' ORDER BY n)
    INTO key_list, key_aliases
    FROM unnest(keys) WITH ORDINALITY AS u(k, n);

    lock_sql := format($sql$
SELECT pg_catalog.array_agg(idgen_row) FROM (
    SELECT ctid AS idgen_row FROM %1$s
    WHERE %2$s IS NULL AND ($1 IS NULL OR %3$s)
    ORDER BY %4$s LIMIT %5$s
    FOR NO KEY UPDATE) idgen_locked$sql$,
        qualified, target, cursor_cond, key_list, batch_size);
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
        qualified, target, value_expression, key_aliases,
        (SELECT string_agg(format('idgen_k%s::pg_catalog.text', n), ', ' ORDER BY n) FROM generate_subscripts(keys, 1) n));
    -- The value expression's type, without evaluating it.
    type_sql := format('SELECT pg_catalog.pg_typeof((SELECT (%s) FROM %s LIMIT 0))', value_expression, qualified);
    remaining_sql := format('SELECT pg_catalog.count(*) FROM %s WHERE %s IS NULL', qualified, target);
END
$$;

CREATE OR REPLACE PROCEDURE idgen_backfill(relation regclass, target_column name, value_expression text,
        batch_size integer DEFAULT 5000, order_by text DEFAULT NULL,
        pause interval DEFAULT '0', lock_timeout interval DEFAULT '500ms',
        statement_timeout interval DEFAULT '1min', report_every interval DEFAULT '10s')
    LANGUAGE plpgsql
AS $$
DECLARE
    plan record;
    value_type pg_catalog.regtype;
    cursor_key pg_catalog.text[];
    locked pg_catalog.tid[];
    last_key pg_catalog.text[];
    filled bigint;
    nulls bigint;
    lock_failures integer := 0;
    action pg_catalog.text;
    lock_ms pg_catalog.text := pg_catalog.format('%s ms', pg_catalog.floor(pg_catalog.date_part('epoch', lock_timeout) OPERATOR(pg_catalog.*) 1000));
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
