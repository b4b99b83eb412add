-- THIS FILE IS CONSUMED BY portable/build.py: the portable SQL edition is this file as it is,
-- but for its "edition block" (the one C function), which the build swaps for the one of
-- portable/src/60_backfill_portable.sql (docs/portable.md "One seam").
--
-- idgen_backfill: fills a new key column of a live table in batches, one commit each, so that
-- the application keeps writing (README: "Migrating an existing table").
--
-- The procedure is PL/pgSQL with transaction control, so it cannot carry SET search_path; it
-- only calls the helpers below (which do) with qualified names, and runs two statements under
-- the caller's search_path on purpose: the type check of the caller's value expression and the
-- batch statement that evaluates it.

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
-- 0.5.0: which walk the run took and why, and whether rows_total is an estimate from the
-- statistics (a large table walked by an index is not counted first). Added with ALTER TABLE
-- so that a fresh install has the columns in the order an updated one does.
ALTER TABLE idgen_backfill_progress ADD COLUMN walk text, ADD COLUMN rows_total_estimated boolean NOT NULL DEFAULT false;
ALTER TABLE idgen_backfill_progress ENABLE ROW LEVEL SECURITY;
CREATE POLICY idgen_backfill_progress_read ON idgen_backfill_progress FOR SELECT USING (true);
CREATE POLICY idgen_backfill_progress_own ON idgen_backfill_progress FOR ALL
    USING (run_by OPERATOR(pg_catalog.=) CURRENT_USER) WITH CHECK (run_by OPERATOR(pg_catalog.=) CURRENT_USER);
-- UPDATE of the columns idgen_backfill writes, not of the table, and no DELETE: LOCK TABLE in a
-- mode that could stop a run (SHARE and stronger) needs UPDATE, DELETE or TRUNCATE on the table
-- itself (INSERT allows only ROW EXCLUSIVE, which conflicts with none of the run's locks), and
-- row locks (FOR UPDATE) reach only a role's own rows, by the policy (issue 44).
GRANT SELECT, INSERT ON idgen_backfill_progress TO PUBLIC;
GRANT UPDATE (pid, started_at, updated_at, reported_at, finished_at, batches, rows_done, rows_total,
              rows_per_second, eta, walk, rows_total_estimated) ON idgen_backfill_progress TO PUBLIC;

-- edition block idgen_statement_timeout begin
-- Arms PostgreSQL's statement timeout for the batch about to run (0 disarms it): inside a
-- procedure, SET statement_timeout does not re-arm the timer (src/backfill.rs). The portable
-- edition's (portable/src/60_backfill_portable.sql) is PL/pgSQL.
CREATE FUNCTION idgen_statement_timeout(milliseconds integer) RETURNS void
    AS 'MODULE_PATHNAME', 'idgen_statement_timeout_wrapper' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
-- edition block idgen_statement_timeout end

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
    -- The base type once (a planner that calls it per catalog row took 0.3 s per operator).
    WITH b AS MATERIALIZED (SELECT @extschema@.idgen_backfill_base_type(typ) AS base)
    SELECT format('OPERATOR(%I.%s)', n.nspname, o.oprname)
    FROM b CROSS JOIN pg_opclass oc
    JOIN pg_amop ao ON ao.amopfamily = oc.opcfamily AND ao.amoplefttype = oc.opcintype
         AND ao.amoprighttype = oc.opcintype AND ao.amopstrategy = strategy
    JOIN pg_operator o ON o.oid = ao.amopopr
    JOIN pg_namespace n ON n.oid = o.oprnamespace
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
    IF kind IS DISTINCT FROM 'r' AND kind IS DISTINCT FROM 'p' THEN
        RAISE EXCEPTION '"%" is not a table', rel USING ERRCODE = 'wrong_object_type';
    END IF;
    -- Citus: the rows of a distributed or reference table are in shards, out of the batches'
    -- reach (they find rows by ctid). A hash-distributed table is filled shard by shard.
    IF EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        SELECT p.partmethod INTO kind FROM pg_dist_partition p WHERE p.logicalrelid = relation;
        IF kind = 'n' THEN
            RAISE EXCEPTION 'idgen_backfill cannot fill the Citus reference table "%"', rel
                USING ERRCODE = 'feature_not_supported',
                      HINT = 'Fill the column before create_reference_table(), or with UPDATE statements through Citus.';
        ELSIF kind IS NOT NULL THEN
            RAISE EXCEPTION 'idgen_backfill cannot fill the Citus distributed table "%" from here', rel
                USING ERRCODE = 'feature_not_supported',
                      HINT = format('Fill it shard by shard on the nodes that hold them, from the coordinator: SELECT * FROM run_command_on_shards(%L, $cmd$CALL %I.idgen_backfill(%L, ...)$cmd$).', rel, '@extschema@', '%s');
        END IF;
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

-- Runs a batch's lock_sql. Keyset pagination only pays off when the batch walks an index from
-- the cursor; right after ADD COLUMN the planner knows nothing of the new column's NULLs and
-- would rather read and sort the whole table for each batch. Here it cannot.
CREATE FUNCTION idgen_backfill_lock(lock_sql text, cursor_key text[]) RETURNS tid[]
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    SET enable_seqscan = off
    SET enable_sort = off
    SET enable_hashjoin = off
    SET enable_mergejoin = off
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

-- How the run walks the table, and the statements of the sorted walk (0.5.0).
--   'index'  a valid btree index leads with the walk's first column (order_by, else the
--            primary key) on a table that is not partitioned: keyset pagination over it, as
--            idgen_backfill_plan writes it.
--   'sorted' otherwise, when the table has a primary key: the primary keys of the rows still
--            to fill are sorted once, in the walk's order, into a work table of chunks (one
--            row per batch_size keys, each key column an array in the walk's order), and each
--            batch takes the head of the first chunk, reaching its rows by primary key (a
--            concurrent update moves a row, never its key). A partitioned table always takes
--            it: one sort over every leaf partition, so the ids follow the walk across
--            partitions whatever the partitioning.
--   'scan'   neither: keyset pagination without an index, each batch reads the whole table.
-- The work table is named after the table's OID and the column's number, always
-- schema-qualified: an UNLOGGED table in the table's schema when the caller may create there
-- (it outlives the session, so a run cancelled in one session resumes in another without
-- sorting again), else a temporary one (pg_temp, this session only). It holds only the keys
-- not walked yet: each batch removes its keys in its own transaction. A batch's bounds are
-- ARRAY[chunk, n] (bigint[]): the first n keys of that chunk.
--   probe_sql   whether any row is still to fill (stops at the first)
--   create_sql  the work table, empty
--   sort_sql    fills it: row_number() OVER (ORDER BY the walk), grouped into chunks; sorts
--               that spill to temporary files beyond work_mem
--   fill_sql    fills the batch's rows still to fill: one UPDATE whose rows come from the
--               chunk's arrays in order (a function scan with ordinality), each reached by
--               primary key in a nested loop, so the UPDATE takes each row's lock and
--               evaluates the value expression row by row in the walk's order. It checks that
--               order: it returns the rows filled, how many got NULL, and how many came before
--               the row filled ahead of them (RETURNING gives the rows in the order they were
--               updated). idgen_backfill_fill_range rolls the batch back when that is not 0.
--   lock_sql    and
--   ordered_sql the same batch in two statements, used only then: lock its rows, then evaluate
--               the value expression ORDER BY the walk (PostgreSQL evaluates a volatile
--               expression after the sort) and fill them by primary key
--   forget_sql  removes the batch's keys from the work table
CREATE FUNCTION idgen_backfill_work_plan(relation regclass, target_column name, value_expression text,
        order_by text, batch_size integer,
        OUT walk text, OUT reason text, OUT work_schema name, OUT work_name name, OUT signature text,
        OUT probe_sql text, OUT create_sql text, OUT sort_sql text, OUT fill_sql text,
        OUT lock_sql text, OUT ordered_sql text, OUT forget_sql text)
    LANGUAGE plpgsql STABLE PARALLEL SAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kind "char";
    persistence "char";
    schema_name name;
    rel_name name;
    qualified text;
    work text;
    target text := quote_ident(target_column);
    pk name[];
    keys name[];
    index_name name;
    key_list text;
    columns text;
    sorted_list text;
    chunk_list text;
    rows_from text;
    join_cond text;
    update_cond text;
    key_aliases text;
    trim_list text;
    denied_type text;
BEGIN
    SELECT c.relkind, c.relpersistence, n.nspname, c.relname, format('%I.%I', n.nspname, c.relname)
    INTO kind, persistence, schema_name, rel_name, qualified
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation;
    SELECT array_agg(a.attname ORDER BY k.n) INTO pk
    FROM pg_index x
    CROSS JOIN LATERAL unnest(x.indkey::smallint[]) WITH ORDINALITY AS k(attnum, n)
    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
    WHERE x.indrelid = relation AND x.indisprimary;
    IF order_by IS NULL THEN
        keys := pk;
    ELSE
        keys := ARRAY[order_by::name] || array(SELECT c FROM unnest(pk) c WHERE c <> order_by);
    END IF;
    SELECT i.relname INTO index_name
    FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
    JOIN pg_am am ON am.oid = i.relam AND am.amname = 'btree'
    JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = x.indkey[0]
    WHERE x.indrelid = relation AND a.attname = keys[1] AND x.indisvalid AND x.indpred IS NULL
    ORDER BY i.relname LIMIT 1;

    IF kind = 'r' AND index_name IS NOT NULL THEN
        walk := 'index';
        reason := format('index %I leads with %I', index_name, keys[1]);
    ELSIF pk IS NULL THEN
        IF kind = 'p' THEN
            RAISE EXCEPTION 'partitioned table "%" has no primary key to walk its partitions by', relation::text
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Add a primary key, or call idgen_backfill for each partition.';
        END IF;
        walk := 'scan';
        reason := format('no index leads with %I and there is no primary key to sort by: each batch reads the whole table', keys[1]);
        RAISE WARNING 'no index on "%" leads with column "%": each batch of idgen_backfill will read the whole table', relation::text, keys[1]
            USING HINT = format('Create one first: CREATE INDEX CONCURRENTLY ON %s (%I);', relation::text, keys[1]);
    ELSE
        walk := 'sorted';
        reason := CASE WHEN kind = 'p' THEN 'partitioned table: one sort over every partition'
                       ELSE format('no index leads with %I', keys[1]) END;
    END IF;
    IF pk IS NULL THEN
        RETURN; -- no work table: the sweep walks again from the start
    END IF;

    work_name := format('idgen_backfill_%s_%s', relation::oid, @extschema@.idgen_backfill_column(relation, target_column));
    IF persistence = 't' OR NOT has_schema_privilege(schema_name, 'CREATE') THEN
        work_schema := 'pg_temp';
        work := format('pg_temp.%I', work_name);
        create_sql := 'CREATE TEMPORARY TABLE ' || work;
        IF walk = 'sorted' THEN
            reason := reason || CASE WHEN persistence = 't' THEN ', work table temporary as the table is'
                ELSE format(', work table temporary: no CREATE on schema %I, so a run resumed in another session sorts again', schema_name) END;
        END IF;
    ELSE
        work_schema := schema_name;
        work := format('%I.%I', schema_name, work_name);
        create_sql := 'CREATE UNLOGGED TABLE ' || work;
    END IF;
    -- The work table is the caller's, so it needs USAGE on its columns' types: a domain's keys
    -- are kept as its base type (rapkey's as text COLLATE "C"); any other type the caller may not
    -- use is an error now, before the first batch, not when a sort or the closing sweep makes it.
    SELECT format_type(b.base, NULL) INTO denied_type
    FROM unnest(pk) AS k(col)
    JOIN pg_attribute a ON a.attrelid = relation AND a.attname = k.col
    CROSS JOIN LATERAL (SELECT @extschema@.idgen_backfill_base_type(a.atttypid) AS base) b
    WHERE NOT has_type_privilege(b.base, 'USAGE') LIMIT 1;
    IF denied_type IS NOT NULL THEN
        RAISE EXCEPTION 'permission denied for type %', denied_type
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'idgen_backfill keeps the primary keys it has still to walk in a work table of the caller''s, with a column of that type.',
                  HINT = format('The type''s owner can grant it: GRANT USAGE ON TYPE %s TO %I;', denied_type, current_user);
    END IF;
    signature := format('idgen_backfill work table of relation %s column %s, walk (%s), chunks of primary keys',
        relation::oid, target_column, array_to_string(keys, ', '));

    SELECT string_agg(quote_ident(k), ', ' ORDER BY n) INTO key_list FROM unnest(keys) WITH ORDINALITY AS u(k, n);
    SELECT string_agg(format('idgen_k%s %s[]%s NOT NULL', k.n,
                             format_type(t.oid, CASE WHEN t.oid = a.atttypid THEN a.atttypmod ELSE -1 END),
                             CASE WHEN a.attcollation <> t.typcollation
                                  THEN (SELECT format(' COLLATE %I.%I', cn.nspname, co.collname)
                                        FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace
                                        WHERE co.oid = a.attcollation) ELSE '' END), ', ' ORDER BY k.n),
           string_agg(format('%I AS idgen_k%s', k.col, k.n), ', ' ORDER BY k.n),
           string_agg(format('pg_catalog.array_agg(idgen_k%s ORDER BY idgen_n)', k.n), ', ' ORDER BY k.n),
           string_agg(format('pg_catalog.unnest((SELECT idgen_chunk.idgen_k%s[1:($1)[2]::pg_catalog.int4] FROM %s AS idgen_chunk WHERE idgen_chunk.idgen_chunk OPERATOR(pg_catalog.=) ($1)[1]))',
                             k.n, work), ', ' ORDER BY k.n),
           string_agg(format('%s.%I %s idgen_work.idgen_k%s', qualified, k.col,
                             @extschema@.idgen_backfill_operator(a.atttypid, 3), k.n), ' AND ' ORDER BY k.n),
           string_agg(format('%s.%I %s idgen_valued.idgen_k%s', qualified, k.col,
                             @extschema@.idgen_backfill_operator(a.atttypid, 3), k.n), ' AND ' ORDER BY k.n),
           string_agg(format('%s.%I AS idgen_k%s', qualified, k.col, k.n), ', ' ORDER BY k.n),
           string_agg(format('idgen_k%1$s = idgen_k%1$s[($1)[2]::pg_catalog.int4 OPERATOR(pg_catalog.+) 1:]', k.n), ', ' ORDER BY k.n)
    INTO columns, sorted_list, chunk_list, rows_from, join_cond, update_cond, key_aliases, trim_list
    FROM unnest(pk) WITH ORDINALITY AS k(col, n)
    JOIN pg_attribute a ON a.attrelid = relation AND a.attname = k.col
    JOIN pg_type t ON t.oid = @extschema@.idgen_backfill_base_type(a.atttypid);
    rows_from := format('ROWS FROM (%s) WITH ORDINALITY AS idgen_work(%s, idgen_n)', rows_from,
        (SELECT string_agg(format('idgen_k%s', n), ', ' ORDER BY n) FROM generate_subscripts(pk, 1) n));

    probe_sql := format('SELECT EXISTS (SELECT FROM %s WHERE %s IS NULL)', qualified, target);
    create_sql := format('%s (idgen_chunk pg_catalog.int8 PRIMARY KEY, %s)', create_sql, columns);
    sort_sql := format($sql$
INSERT INTO %1$s
SELECT (idgen_n OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog./) %2$s, %3$s
FROM (SELECT pg_catalog.row_number() OVER (ORDER BY %4$s) AS idgen_n, %5$s FROM %6$s WHERE %7$s IS NULL) idgen_sorted
GROUP BY 1$sql$,
        work, batch_size, chunk_list, key_list, sorted_list, qualified, target);
    fill_sql := format($sql$
WITH idgen_updated AS (
    UPDATE %1$s SET %2$s = (%3$s) FROM %4$s
    WHERE %5$s AND %1$s.%2$s IS NULL
    RETURNING idgen_work.idgen_n, %1$s.%2$s IS NULL AS idgen_null
), idgen_checked AS (
    SELECT idgen_null, idgen_n OPERATOR(pg_catalog.<) pg_catalog.lag(idgen_n) OVER () AS idgen_back FROM idgen_updated
)
SELECT pg_catalog.count(*), pg_catalog.count(*) FILTER (WHERE idgen_null), pg_catalog.count(*) FILTER (WHERE idgen_back)
FROM idgen_checked$sql$,
        qualified, target, value_expression, rows_from, join_cond);
    lock_sql := format($sql$
SELECT pg_catalog.count(*) FROM (
    SELECT FROM %1$s JOIN %2$s ON %3$s
    WHERE %2$s.%4$s IS NULL
    ORDER BY idgen_work.idgen_n
    FOR NO KEY UPDATE OF %5$I) idgen_locked$sql$,
        rows_from, qualified, join_cond, target, rel_name);
    ordered_sql := format($sql$
WITH idgen_valued AS MATERIALIZED (
    SELECT idgen_work.idgen_n, (%3$s) AS idgen_value, %4$s
    FROM %5$s JOIN %1$s ON %6$s
    WHERE %1$s.%2$s IS NULL
    ORDER BY idgen_work.idgen_n
), idgen_updated AS (
    UPDATE %1$s SET %2$s = idgen_valued.idgen_value FROM idgen_valued WHERE %7$s
    RETURNING 1
)
SELECT (SELECT pg_catalog.count(*) FROM idgen_updated),
       (SELECT pg_catalog.count(*) FROM idgen_valued WHERE idgen_value IS NULL),
       0::pg_catalog.int8$sql$,
        qualified, target, value_expression, key_aliases, rows_from, join_cond, update_cond);
    forget_sql := format($sql$
WITH idgen_walked AS (
    DELETE FROM %1$s WHERE idgen_chunk OPERATOR(pg_catalog.=) ($1)[1]
        AND pg_catalog.cardinality(idgen_k1) OPERATOR(pg_catalog.<=) ($1)[2]
)
UPDATE %1$s SET %2$s
WHERE idgen_chunk OPERATOR(pg_catalog.=) ($1)[1] AND pg_catalog.cardinality(idgen_k1) OPERATOR(pg_catalog.>) ($1)[2]$sql$,
        work, trim_list);
END
$$;
COMMENT ON FUNCTION idgen_backfill_work_plan(regclass, name, text, text, integer) IS 'internal: how a backfill walks the table, and the sorted walk''s statements on its work table (42501 when the caller may not use a key''s type)';

-- The table being filled, checked at the start of every transaction whose statements read or
-- write it: the run planned them with its schema-qualified name, and the owner of its schema
-- can drop it between two batches and make another relation of that name (a table with a
-- trigger, a view whose SELECT runs its functions) for the next batch to run as the caller.
-- LOCK TABLE ONLY by that name (ROW EXCLUSIVE, the lock the batch's UPDATE takes; it runs no
-- user code), then the name must still mean relation: until the transaction ends it cannot be
-- dropped or renamed. A caller whose rights on the table are per column cannot LOCK it: then
-- the name is only checked. With qualified NULL (the run's first check), its name now; returns
-- the name.
CREATE FUNCTION idgen_backfill_target_check(relation regclass, qualified text) RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    now_named text;
    -- Citus (a shard filled through run_command_on_shards, as its hint says) refuses LOCK on a
    -- shard unless manual changes to shards are on: on for this one statement, then as it was.
    shards text := current_setting('citus.enable_manual_changes_to_shards', true);
BEGIN
    IF qualified IS NULL THEN
        SELECT format('%I.%I', n.nspname, c.relname) INTO qualified
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation;
    END IF;
    BEGIN
        IF shards IS NOT NULL THEN
            PERFORM set_config('citus.enable_manual_changes_to_shards', 'on', true);
        END IF;
        EXECUTE format('LOCK TABLE ONLY %s IN ROW EXCLUSIVE MODE', qualified);
        IF shards IS NOT NULL THEN
            PERFORM set_config('citus.enable_manual_changes_to_shards', shards, true);
        END IF;
    EXCEPTION WHEN insufficient_privilege OR undefined_table OR wrong_object_type THEN
        NULL; -- per-column rights; or the name means no table now: said below
    END;
    IF to_regclass(qualified) IS DISTINCT FROM relation THEN
        -- After the lock, in a new snapshot: the table's name now, if it is still there.
        SELECT format('%I.%I', n.nspname, c.relname) INTO now_named
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = relation;
        IF now_named IS NULL THEN
            RAISE EXCEPTION 'relation "%" was dropped while idgen_backfill filled it', qualified
                USING ERRCODE = 'undefined_table',
                      DETAIL = CASE WHEN to_regclass(qualified) IS NOT NULL
                          THEN 'Another relation of that name was made since; it was not read or written.' END;
        END IF;
        RAISE EXCEPTION 'relation "%" was renamed to "%" while idgen_backfill filled it', qualified, now_named
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Call idgen_backfill again: it continues where it stopped.';
    END IF;
    RETURN qualified;
END
$$;
COMMENT ON FUNCTION idgen_backfill_target_check(regclass, text) IS 'internal: locks the table the run fills by its name and checks the name still means it';

-- The work table, checked before anything reads or writes it, in every transaction that
-- touches it: a table the run made, or one that an earlier run of the caller's left. The owner
-- of the schema it is in can drop any table there (the caller's own work table too, between two
-- batches) and create one of that name: a table with a trigger, or a view whose SELECT runs its
-- functions, would run them with the caller's rights. So, by OID, from the catalogs only (no
-- user code): a plain table ('r'), owned by the caller, with the COMMENT the run leaves
-- (signature); else 42P07, its DETAIL saying why. Then LOCK TABLE by its qualified name (it
-- takes the lock and runs nothing else), and the name looked up again: the same table, it
-- cannot be dropped or replaced until the transaction ends; another relation, or none (dropped,
-- and maybe made again, between the look-up and the lock), is 42P07 too.
--   missing_ok     no relation of that name is not an error: returns NULL
--   other_walk_ok  the caller's work table of an earlier run that walked this table in another
--                  order (its signature names this table's OID) is not an error: returns false
--                  (to be dropped, never walked)
-- Returns true when it is the run's work table (then locked).
CREATE FUNCTION idgen_backfill_work_check(work_schema name, work_name name, signature text,
        missing_ok boolean, other_walk_ok boolean) RETURNS boolean
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    work text := format('%I.%I', work_schema, work_name);
    space oid := CASE WHEN work_schema = 'pg_temp' THEN pg_my_temp_schema()
                      ELSE (SELECT n.oid FROM pg_namespace n WHERE n.nspname = work_schema) END;
    -- The signature up to the column's name: "idgen_backfill work table of relation OID".
    this_table text := split_part(signature, ' column ', 1);
    found record;
    why text;
BEGIN
    SELECT c.oid, c.relkind, c.relowner, pg_get_userbyid(c.relowner) AS owner_name,
           obj_description(c.oid, 'pg_class') AS comment
    INTO found FROM pg_class c WHERE c.relname = work_name AND c.relnamespace = space;
    IF found.oid IS NULL THEN
        IF missing_ok THEN
            RETURN NULL;
        END IF;
        RAISE EXCEPTION 'idgen_backfill''s work table "%" is gone', work
            USING ERRCODE = 'undefined_table',
                  DETAIL = format('Another session dropped it during the run (the owner of schema %I can).', work_schema),
                  HINT = 'Call idgen_backfill again: it sorts the rows still to fill again.';
    END IF;
    why := CASE
        WHEN found.relkind <> 'r' THEN
            format('It is %s, not a table.', CASE found.relkind WHEN 'v' THEN 'a view'
                WHEN 'm' THEN 'a materialized view' WHEN 'p' THEN 'a partitioned table'
                WHEN 'f' THEN 'a foreign table' WHEN 'S' THEN 'a sequence' WHEN 'i' THEN 'an index'
                ELSE format('a relation of kind %L', found.relkind) END)
        WHEN found.relowner <> (SELECT r.oid FROM pg_roles r WHERE r.rolname = CURRENT_USER) THEN
            format('It is owned by role %I, not by %I.', found.owner_name, CURRENT_USER)
        WHEN found.comment = signature THEN NULL
        WHEN other_walk_ok AND left(found.comment, length(this_table) + 1) = this_table || ' ' THEN NULL
        WHEN found.comment LIKE 'idgen_backfill work table of %' THEN
            'It is the work table of a run that walked the table in another order.'
        ELSE 'It does not carry the comment idgen_backfill leaves on its work tables.' END;
    IF why IS NULL THEN
        BEGIN
            EXECUTE format('LOCK TABLE %s IN ACCESS SHARE MODE', work);
        EXCEPTION WHEN insufficient_privilege OR undefined_table OR wrong_object_type THEN
            NULL; -- the name means another relation now, or none: said below
        END;
        -- The catalogs' latest (to_regclass looks the name up as LOCK TABLE did, not in this
        -- statement's snapshot).
        IF to_regclass(work) IS DISTINCT FROM found.oid THEN
            why := 'It was dropped, or dropped and made again, while it was being checked.';
        END IF;
    END IF;
    IF why IS NOT NULL THEN
        RAISE EXCEPTION 'relation "%" exists and is not idgen_backfill''s work table of this run', work
            USING ERRCODE = 'duplicate_table',
                  DETAIL = why || ' It was not read or written.',
                  HINT = 'Drop or rename it, or run idgen_backfill as its owner.';
    END IF;
    RETURN found.comment = signature;
END
$$;
COMMENT ON FUNCTION idgen_backfill_work_check(name, name, text, boolean, boolean) IS 'internal: 42P07 unless the work table is the run''s own (a table of the caller''s with its signature), then locks it';

-- Makes the work table ready to walk and returns how many keys it holds: a work table of an
-- earlier run with the same walk (checked: idgen_backfill_work_check, and not emptied by a
-- crash: it is unlogged) is kept when reuse is true; otherwise the rows still to fill are
-- sorted into a new one (the caller's work table of an earlier run is dropped first, whatever
-- its walk). Nothing to fill: no work table, and 0. Any other relation of that name is an error
-- (42P07), never read, written or dropped.
CREATE FUNCTION idgen_backfill_sort(work_schema name, work_name name, signature text, probe_sql text,
        create_sql text, sort_sql text, reuse boolean, OUT keys bigint, OUT reused boolean)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    work text := format('%I.%I', work_schema, work_name);
    same_walk boolean := @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, true, true);
    any_left boolean;
BEGIN
    reused := false;
    IF same_walk AND reuse THEN
        EXECUTE format('SELECT pg_catalog.sum(pg_catalog.cardinality(idgen_k1)) FROM %s', work) INTO keys;
        IF keys > 0 THEN
            reused := true;
            RETURN;
        END IF;
    END IF;
    IF same_walk IS NOT NULL THEN
        EXECUTE 'DROP TABLE ' || work;
    END IF;
    keys := 0;
    EXECUTE probe_sql INTO any_left;
    IF NOT any_left THEN
        RETURN;
    END IF;
    -- An error (42P07) if a relation of that name was made since the check. Made here, it stays
    -- locked (ACCESS EXCLUSIVE) until the transaction ends.
    EXECUTE create_sql;
    EXECUTE sort_sql;
    EXECUTE format('SELECT pg_catalog.sum(pg_catalog.cardinality(idgen_k1)) FROM %s', work) INTO keys;
    EXECUTE format('COMMENT ON TABLE %s IS %L', work, signature);
END
$$;
COMMENT ON FUNCTION idgen_backfill_sort(name, name, text, text, text, text, boolean) IS 'internal: the sorted walk''s work table, kept from an earlier run or sorted anew';

-- The work table's first chunk (the next batch's), and how many keys it holds; NULL when the
-- work table is walked, or not there (an error when expected, after a sort that left keys in
-- it), or an earlier run's of another walk (idgen_backfill_sort drops it).
CREATE FUNCTION idgen_backfill_next_chunk(work_schema name, work_name name, signature text, expected boolean,
        OUT chunk bigint, OUT keys integer)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, NOT expected, true) THEN
        EXECUTE format('SELECT idgen_chunk, pg_catalog.cardinality(idgen_k1) FROM %I.%I ORDER BY idgen_chunk LIMIT 1',
            work_schema, work_name) INTO chunk, keys;
    END IF;
END
$$;
COMMENT ON FUNCTION idgen_backfill_next_chunk(name, name, text, boolean) IS 'internal: the work table''s first chunk and how many keys it holds';

-- Removes a batch's keys from the work table, the batch committing with it.
CREATE FUNCTION idgen_backfill_forget(work_schema name, work_name name, signature text,
        forget_sql text, bounds bigint[]) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, false, false);
    EXECUTE forget_sql USING bounds;
END
$$;
COMMENT ON FUNCTION idgen_backfill_forget(name, name, text, text, bigint[]) IS 'internal: removes a batch''s keys from the work table';

-- Drops the work table once the run is done (when it is there: checked, the caller's).
CREATE FUNCTION idgen_backfill_drop_work(work_schema name, work_name name, signature text) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, true, true) IS NOT NULL THEN
        EXECUTE format('DROP TABLE %I.%I', work_schema, work_name);
    END IF;
END
$$;
COMMENT ON FUNCTION idgen_backfill_drop_work(name, name, text) IS 'internal: drops the run''s work table once it is done';

-- Fills a sorted walk's batch (bounds ARRAY[chunk, n]) with its fill_sql: a nested loop from
-- the chunk's arrays to the table's primary key, which these settings leave the planner as
-- its only plan. Should PostgreSQL still have updated the rows in another order (fill_sql
-- counts them), the batch is rolled back and filled again by lock_sql then ordered_sql, whose
-- order is explicit. The work table is checked first (idgen_backfill_work_check). No SET
-- search_path: the statements hold the caller's value expression.
CREATE FUNCTION idgen_backfill_fill_range(work_schema name, work_name name, signature text,
        fill_sql text, lock_sql text, ordered_sql text, bounds bigint[],
        OUT filled bigint, OUT nulls bigint, OUT last_key text[])
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET enable_hashjoin = off
    SET enable_mergejoin = off
    SET enable_seqscan = off
    SET enable_bitmapscan = off
    SET enable_sort = off
    SET enable_material = off
AS $$
DECLARE
    behind bigint;
BEGIN
    PERFORM @extschema@.idgen_backfill_work_check(work_schema, work_name, signature, false, false);
    BEGIN
        EXECUTE fill_sql INTO filled, nulls, behind USING bounds;
        IF behind OPERATOR(pg_catalog.>) 0 THEN
            RAISE EXCEPTION 'idgen_backfill: % rows of the batch were filled out of the walk''s order', behind
                USING ERRCODE = 'IDG01';
        END IF;
    EXCEPTION WHEN SQLSTATE 'IDG01' THEN
        RAISE DEBUG 'idgen_backfill: batch % filled again in two statements (the plan updated % rows out of order)',
            bounds, behind;
        EXECUTE lock_sql USING bounds;
        EXECUTE ordered_sql INTO filled, nulls, behind USING bounds;
    END;
END
$$;
COMMENT ON FUNCTION idgen_backfill_fill_range(name, name, text, text, text, text, bigint[]) IS 'internal: fills one batch of the sorted walk, in the walk''s order';

-- The rows to fill when the run starts: counted when the table is small, else (at or above
-- 10,000,000 rows in the statistics, where a count reads the whole table for minutes) estimated
-- from the statistics: the table's row count times the column's fraction of NULLs when ANALYZE
-- has seen the column, else every row.
CREATE FUNCTION idgen_backfill_count(relation regclass, target_column name, remaining_sql text,
        OUT total bigint, OUT estimated boolean)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    tuples double precision;
BEGIN
    SELECT c.reltuples INTO tuples FROM pg_class c WHERE c.oid = relation;
    IF tuples >= 1e7 THEN
        SELECT round(tuples * coalesce((SELECT s.null_frac FROM pg_stats s JOIN pg_class c ON c.oid = relation
                                        JOIN pg_namespace n ON n.oid = c.relnamespace
                                        WHERE s.schemaname = n.nspname AND s.tablename = c.relname
                                          AND s.attname = target_column AND NOT s.inherited), 1))::bigint
        INTO total;
        estimated := true;
    ELSE
        EXECUTE remaining_sql INTO total;
        estimated := false;
    END IF;
END
$$;

-- Starts (or restarts) the run's progress row, and says which walk the run takes and why.
CREATE FUNCTION idgen_backfill_start(relation regclass, target_column name, total bigint,
        estimated boolean, walk text, reason text) RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    now timestamptz := clock_timestamp();
BEGIN
    INSERT INTO @extschema@.idgen_backfill_progress AS p
        (relation, target_column, run_by, pid, started_at, updated_at, reported_at, batches, rows_done, rows_total,
         walk, rows_total_estimated)
    VALUES (relation, target_column, CURRENT_USER, pg_backend_pid(), now, now, now, 0, 0, total, walk, estimated)
    ON CONFLICT ON CONSTRAINT idgen_backfill_progress_pkey DO UPDATE SET
        pid = excluded.pid, started_at = now, updated_at = now, reported_at = now, finished_at = NULL,
        batches = 0, rows_done = 0, rows_total = total, rows_per_second = NULL, eta = NULL,
        walk = excluded.walk, rows_total_estimated = estimated;
    RAISE NOTICE 'idgen_backfill %.%: % walk (%), % rows to fill%', relation::text, quote_ident(target_column),
        walk, reason, CASE WHEN estimated THEN 'about ' || total ELSE total::text END,
        CASE WHEN estimated THEN ' (estimated from the statistics)' ELSE '' END;
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

    -- In SET, columns are the values before this batch. An estimated total becomes exact when
    -- the run is done (every row it filled), or when the rows done pass it.
    UPDATE @extschema@.idgen_backfill_progress AS p SET
        batches = p.batches + (filled > 0)::integer,
        rows_done = p.rows_done + filled,
        rows_total = CASE WHEN action = 'done' AND p.rows_total_estimated THEN p.rows_done + filled
                          ELSE greatest(p.rows_total, p.rows_done + filled) END,
        rows_total_estimated = p.rows_total_estimated AND action <> 'done' AND p.rows_total > p.rows_done + filled,
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
            progress.rows_done,
            CASE WHEN progress.rows_total_estimated THEN 'about ' || progress.rows_total ELSE progress.rows_total::text END,
            CASE WHEN action = 'done' THEN format(' in %s s, done', round(extract(epoch FROM now - progress.started_at), 1))
                 ELSE format(', %s rows/s, about %s left%s', round(progress.rows_per_second), progress.eta,
                             CASE WHEN progress.rows_total_estimated THEN ' (total estimated)' ELSE '' END) END;
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
    work record;
    sorted record;
    value_type pg_catalog.regtype;
    cursor_key pg_catalog.text[];
    locked pg_catalog.tid[];
    last_key pg_catalog.text[];
    filled bigint;
    nulls bigint;
    total bigint;
    estimated boolean;
    lock_failures integer := 0;
    action pg_catalog.text;
    walk pg_catalog.text;
    chunk bigint; -- the sorted walk's next chunk of keys, and how many it holds
    chunk_keys integer;
    just_sorted boolean := false;
    sorted_keys boolean := false; -- the last sort left keys in the work table: it must be there
    target pg_catalog.text; -- the table's qualified name, as the statements name it
    lock_ms pg_catalog.text := pg_catalog.format('%s ms', pg_catalog.floor(pg_catalog.date_part('epoch', lock_timeout) OPERATOR(pg_catalog.*) 1000));
    batch_ms integer := pg_catalog.floor(pg_catalog.date_part('epoch', statement_timeout) OPERATOR(pg_catalog.*) 1000);
BEGIN
    -- From here on statement_timeout is the procedure's: for the checks below, then for each
    -- batch (the session's own would cancel the whole CALL). The statements that read the whole
    -- table (the opening count or sort, and the sorts of the closing sweep) take no row lock
    -- and run without it.
    PERFORM @extschema@.idgen_statement_timeout(batch_ms);
    SELECT * INTO plan FROM @extschema@.idgen_backfill_plan(relation, target_column, value_expression,
        batch_size, order_by, pause, lock_timeout, statement_timeout, report_every);
    SELECT * INTO work FROM @extschema@.idgen_backfill_work_plan(relation, target_column, value_expression,
        order_by, batch_size);
    walk := work.walk;
    target := @extschema@.idgen_backfill_target_check(relation, NULL);
    -- The caller's expression, under the caller's search_path: its type, then the batch
    -- statements planned (unknown columns, generated columns, privileges) before any row changes.
    EXECUTE plan.type_sql INTO value_type;
    PERFORM @extschema@.idgen_backfill_check_type(relation, target_column, value_type);
    IF walk OPERATOR(pg_catalog.<>) 'sorted' THEN
        EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) plan.lock_sql USING cursor_key;
        EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) plan.fill_sql USING locked;
    END IF;
    PERFORM pg_catalog.set_config('lock_timeout', lock_ms, true);
    PERFORM @extschema@.idgen_statement_timeout(0);
    IF walk OPERATOR(pg_catalog.<>) 'sorted' AND work.work_name IS NOT NULL THEN
        -- The closing sweep's work table: a relation of its name that is not the caller's work
        -- table is an error now, before the first batch, rather than at the sweep.
        PERFORM @extschema@.idgen_backfill_work_check(work.work_schema, work.work_name, work.signature, true, true);
    END IF;
    IF walk OPERATOR(pg_catalog.=) 'sorted' THEN
        -- A work table an earlier run of the same walk left (cancelled, failed) is walked on.
        SELECT * INTO sorted FROM @extschema@.idgen_backfill_sort(work.work_schema, work.work_name, work.signature,
            work.probe_sql, work.create_sql, work.sort_sql, true);
        just_sorted := NOT sorted.reused;
        sorted_keys := sorted.keys OPERATOR(pg_catalog.>) 0;
        IF sorted.reused THEN
            work.reason := work.reason OPERATOR(pg_catalog.||) ', resuming the work table of an earlier run';
        END IF;
        total := sorted.keys;
        estimated := false;
        IF total OPERATOR(pg_catalog.>) 0 THEN
            PERFORM @extschema@.idgen_statement_timeout(batch_ms);
            EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) work.fill_sql USING ARRAY[0, 0]::pg_catalog.int8[];
            EXECUTE 'EXPLAIN ' OPERATOR(pg_catalog.||) work.ordered_sql USING ARRAY[0, 0]::pg_catalog.int8[];
            PERFORM @extschema@.idgen_statement_timeout(0);
        END IF;
    ELSE
        SELECT * INTO total, estimated FROM @extschema@.idgen_backfill_count(relation, target_column, plan.remaining_sql);
    END IF;
    PERFORM @extschema@.idgen_backfill_start(relation, target_column, total, estimated, walk, work.reason);
    COMMIT;
    LOOP
        IF walk OPERATOR(pg_catalog.=) 'sorted' THEN
            SELECT * INTO chunk, chunk_keys FROM @extschema@.idgen_backfill_next_chunk(work.work_schema, work.work_name,
                work.signature, sorted_keys);
        END IF;
        IF walk OPERATOR(pg_catalog.=) 'sorted' AND chunk IS NULL THEN
            -- The work table is walked. Rows that came in since its sort with no value (or whose
            -- key changed) are sorted into a new one; when there are none, the run is done.
            IF NOT just_sorted THEN
                PERFORM pg_catalog.set_config('lock_timeout', lock_ms, true);
                PERFORM @extschema@.idgen_backfill_target_check(relation, target);
                SELECT * INTO sorted FROM @extschema@.idgen_backfill_sort(work.work_schema, work.work_name,
                    work.signature, work.probe_sql, work.create_sql, work.sort_sql, false);
                sorted_keys := sorted.keys OPERATOR(pg_catalog.>) 0;
                SELECT * INTO chunk, chunk_keys FROM @extschema@.idgen_backfill_next_chunk(work.work_schema, work.work_name,
                    work.signature, sorted_keys);
                just_sorted := true;
            END IF;
            IF chunk IS NULL THEN
                action := @extschema@.idgen_backfill_step(relation, target_column, 0, 0, true, 0, report_every);
                COMMIT;
                EXIT;
            END IF;
            COMMIT;
        END IF;
        BEGIN
            PERFORM pg_catalog.set_config('lock_timeout', lock_ms, true);
            PERFORM @extschema@.idgen_statement_timeout(batch_ms);
            filled := 0;
            nulls := 0;
            PERFORM @extschema@.idgen_backfill_target_check(relation, target);
            IF walk OPERATOR(pg_catalog.=) 'sorted' THEN
                SELECT * INTO filled, nulls, last_key FROM @extschema@.idgen_backfill_fill_range(work.work_schema,
                    work.work_name, work.signature, work.fill_sql, work.lock_sql, work.ordered_sql,
                    ARRAY[chunk, LEAST(chunk_keys, batch_size)]);
                PERFORM @extschema@.idgen_backfill_forget(work.work_schema, work.work_name, work.signature,
                    work.forget_sql, ARRAY[chunk, LEAST(chunk_keys, batch_size)]);
            ELSE
                locked := @extschema@.idgen_backfill_lock(plan.lock_sql, cursor_key);
                IF locked IS NOT NULL THEN
                    SELECT * INTO filled, nulls, last_key FROM @extschema@.idgen_backfill_fill(plan.fill_sql, locked);
                END IF;
            END IF;
            PERFORM @extschema@.idgen_statement_timeout(0);
            lock_failures := 0;
        EXCEPTION WHEN lock_not_available THEN
            PERFORM @extschema@.idgen_statement_timeout(0);
            lock_failures := lock_failures OPERATOR(pg_catalog.+) 1;
        END;
        action := @extschema@.idgen_backfill_step(relation, target_column,
            filled, nulls, walk OPERATOR(pg_catalog.<>) 'sorted' AND cursor_key IS NULL, lock_failures, report_every);
        COMMIT;
        IF action OPERATOR(pg_catalog.=) 'retry' THEN
            PERFORM pg_catalog.pg_sleep(0.1);
        ELSIF walk OPERATOR(pg_catalog.=) 'sorted' THEN
            just_sorted := false;
            IF filled OPERATOR(pg_catalog.>) 0 THEN
                PERFORM pg_catalog.pg_sleep_for(pause);
            END IF;
        ELSIF action OPERATOR(pg_catalog.=) 'next' THEN
            cursor_key := last_key;
            PERFORM pg_catalog.pg_sleep_for(pause);
        ELSIF action OPERATOR(pg_catalog.=) 'sweep' THEN
            IF work.work_name IS NOT NULL THEN
                -- The closing sweep of an index walk sorts what is left, rather than walking the
                -- index from the start under one batch's statement_timeout.
                walk := 'sorted';
                just_sorted := false;
            ELSE
                cursor_key := NULL;
            END IF;
        ELSE -- 'done'
            EXIT;
        END IF;
    END LOOP;
    IF work.work_name IS NOT NULL THEN
        PERFORM @extschema@.idgen_backfill_drop_work(work.work_schema, work.work_name, work.signature);
        COMMIT;
    END IF;
END
$$;
COMMENT ON PROCEDURE idgen_backfill(regclass, name, text, integer, text, interval, interval, interval, interval) IS
    'fills target_column with value_expression where it is NULL, in batches walked by order_by or the primary key (an index, else one sort into a work table), one commit per batch; resumable';
