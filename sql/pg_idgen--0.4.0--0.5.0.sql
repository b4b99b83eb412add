-- pg_idgen 0.4.0 -> 0.5.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.5.0'" to load this file. \quit

-- Each object below is the same as in a fresh 0.5.0 install (sql/*.sql). Sections in the order
-- the changes were made; every one names the file that defines its objects.

-- Assignment casts from text and varchar to xid12 (sql/xid12.sql, "Casts").
CREATE CAST (pg_catalog.text AS xid12) WITH INOUT AS ASSIGNMENT;
CREATE CAST (pg_catalog.varchar AS xid12) WITH INOUT AS ASSIGNMENT;

-- Citus (issue 18): a cluster-wide rapkey counter (sql/rapkey.sql) -------------------------

-- Citus: one counter for the whole cluster ---------------------------------------------------
-- On a Citus cluster every node has its own rapkey_counter, so every node would hand out the
-- same numbers. Called once on the coordinator, this makes rapkey_counter a Citus reference
-- table: rapkey_next, unchanged, then increments the one row of its prefix on every node, from
-- whichever node it is called, holding that row's lock until the transaction ends (so the
-- numbers stay unique and gapless across the cluster, at the cost of a distributed write and
-- two-phase commit per call). Numbers the nodes' own counters already handed out are kept:
-- each prefix starts after the highest of them. Run it before the workers hand out keys, or
-- while they do not. Without Citus it is an error (there is nothing to share).
CREATE FUNCTION rapkey_counter_distribute() RETURNS void
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    counter regclass := '@extschema@.rapkey_counter'::regclass;
    node record;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'Citus is not installed in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Without Citus, rapkey_counter is already the one counter of this database.';
    END IF;
    IF EXISTS (SELECT FROM pg_dist_partition WHERE logicalrelid = counter) THEN
        RAISE NOTICE 'rapkey_counter is already shared by the cluster';
        RETURN;
    END IF;
    IF NOT citus_is_coordinator() THEN
        RAISE EXCEPTION 'rapkey_counter_distribute() runs on the coordinator'
            USING ERRCODE = 'object_not_in_prerequisite_state';
    END IF;
    LOCK TABLE @extschema@.rapkey_counter IN EXCLUSIVE MODE;
    FOR node IN
        SELECT * FROM run_command_on_workers(format(
            'SELECT coalesce(json_agg(json_build_array(prefix, last_value)), ''[]'') FROM %s', counter))
    LOOP
        IF NOT node.success THEN
            RAISE EXCEPTION 'cannot read rapkey_counter on node %:%', node.nodename, node.nodeport
                USING ERRCODE = 'connection_failure', DETAIL = node.result;
        END IF;
        INSERT INTO @extschema@.rapkey_counter AS c (prefix, last_value)
            SELECT e->>0, (e->>1)::bigint FROM json_array_elements(node.result::json) e
        ON CONFLICT ON CONSTRAINT rapkey_counter_pkey
            DO UPDATE SET last_value = greatest(c.last_value, excluded.last_value);
    END LOOP;
    PERFORM create_reference_table(counter);
END
$$;
COMMENT ON FUNCTION rapkey_counter_distribute() IS 'Citus: makes rapkey_counter one counter shared by every node (a reference table), so that rapkey_next is unique across the cluster';

-- Citus (issue 18): the shared-identity guard (sql/snowflake.sql) -----------------------------

-- Citus: nodes that would make the same ids ---------------------------------------------------
-- Every node of a cluster writes its machine id into xid12 and its worker id into Snowflake
-- ids. Two nodes with the same machine id can make equal xid12 (only the pid and counter tell
-- them apart), two with the same worker id equal Snowflake ids. This asks every node of the
-- Citus cluster (through Citus's connections) for its effective ids, returns one row per node, and
-- raises an error naming the nodes when two share one. A worker id of -1 (unset: that node
-- makes no Snowflake ids) is no conflict. Without Citus it is an error.
CREATE FUNCTION idgen_check_cluster_identities()
    RETURNS TABLE (node text, machine_id integer, worker_id integer)
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nodes text[];
    machines integer[];
    workers integer[];
    clash record;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') THEN
        RAISE EXCEPTION 'Citus is not installed in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'This checks the nodes of a Citus cluster; on one server, SELECT xid12_current_machine() and SHOW pg_idgen.worker_id.';
    END IF;
    FOR clash IN
        SELECT n.nodename, n.nodeport, r.success, r.result
        FROM run_command_on_all_nodes(format(
            $q$SELECT format('%%s %%s', (get_byte(m, 0) << 16) | (get_byte(m, 1) << 8) | get_byte(m, 2),
                             coalesce(current_setting('pg_idgen.worker_id', true), '-1'))
               FROM (SELECT %I.xid12_current_machine() AS m) s$q$, '@extschema@')) r
        JOIN pg_dist_node n USING (nodeid)
        ORDER BY n.nodename, n.nodeport
    LOOP
        IF NOT clash.success THEN
            RAISE EXCEPTION 'cannot ask node %:% for its ids', clash.nodename, clash.nodeport
                USING ERRCODE = 'connection_failure', DETAIL = clash.result;
        END IF;
        nodes := nodes || format('%s:%s', clash.nodename, clash.nodeport);
        machines := machines || split_part(clash.result, ' ', 1)::integer;
        workers := workers || split_part(clash.result, ' ', 2)::integer;
    END LOOP;
    FOR clash IN
        WITH i(node, machine_id, worker_id) AS (SELECT * FROM unnest(nodes, machines, workers))
        SELECT 'pg_idgen.machine_id' AS setting, 'machine id' AS what, i.machine_id AS id,
               string_agg(i.node, ' and ' ORDER BY i.node) AS sharing
        FROM i GROUP BY i.machine_id HAVING count(*) > 1
        UNION ALL
        SELECT 'pg_idgen.worker_id', 'worker id', i.worker_id, string_agg(i.node, ' and ' ORDER BY i.node)
        FROM i WHERE i.worker_id >= 0 GROUP BY i.worker_id HAVING count(*) > 1
    LOOP
        RAISE EXCEPTION 'nodes % share the % %', clash.sharing, clash.what, clash.id
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Two nodes with the same %s can make equal ids.', clash.what),
                  HINT = format('Set %s to a different value on each node (postgresql.conf or ALTER SYSTEM, then reload).', clash.setting);
    END LOOP;
    RETURN QUERY SELECT * FROM unnest(nodes, machines, workers);
END
$$;
COMMENT ON FUNCTION idgen_check_cluster_identities() IS 'Citus: every node''s effective xid12 machine id and Snowflake worker id; an error when two nodes share one';

-- Citus (issue 18): idgen_backfill refuses distributed and reference tables (sql/backfill.sql) ---

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
