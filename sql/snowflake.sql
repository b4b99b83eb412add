-- Snowflake ids: bigint = 0 | 41-bit ms since pg_idgen.snowflake_epoch | 10-bit worker | 12-bit sequence.

-- VOLATILE and PARALLEL UNSAFE like nextval(): every call changes the cluster-wide state.
CREATE FUNCTION gen_snowflake() RETURNS bigint
    AS 'MODULE_PATHNAME', 'gen_snowflake_wrapper' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION gen_snowflake() IS 'a new snowflake id, unique and increasing within the cluster';

-- STABLE: the answer depends on pg_idgen.snowflake_epoch.
CREATE FUNCTION snowflake_time(bigint) RETURNS timestamptz
    AS 'MODULE_PATHNAME', 'snowflake_time_wrapper' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_min(timestamptz) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_min_wrapper' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_max(timestamptz) RETURNS bigint
    AS 'MODULE_PATHNAME', 'snowflake_max_wrapper' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION snowflake_min(timestamptz) IS 'the smallest snowflake id of that millisecond';
COMMENT ON FUNCTION snowflake_max(timestamptz) IS 'the largest snowflake id of that millisecond';

CREATE FUNCTION snowflake_worker(bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_worker_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION snowflake_sequence(bigint) RETURNS integer
    AS 'MODULE_PATHNAME', 'snowflake_sequence_wrapper' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Citus: nodes that would make the same ids ---------------------------------------------------
-- Every node of a cluster writes its machine id into xid12 and its worker id into Snowflake
-- ids. Two nodes with the same machine id can make equal xid12 (only the pid and counter tell
-- them apart), two with the same worker id equal Snowflake ids. This asks every node of the
-- Citus cluster (through Citus's connections) for its effective ids, returns one row per node, and
-- raises an error naming the nodes when two share one. A worker id of -1 (unset: that node
-- makes no Snowflake ids) is no conflict. Without Citus it is an error. Called on the
-- coordinator, it also reserves every node's ids in the writer registry.
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
               FROM (SELECT %s.xid12_current_machine() AS m) s$q$, '@extschema@')) r
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
    -- On the coordinator, each node's ids are reserved in the writer registry (sql/registry.sql),
    -- so that idgen_acquire never grants them to an application; ids already reserved stay so.
    IF citus_is_coordinator() THEN
        FOR i IN 1 .. coalesce(array_length(nodes, 1), 0) LOOP
            PERFORM @extschema@.idgen_registry_reserve('xid12', machines[i], format('Citus node %s', nodes[i]), true);
            IF workers[i] >= 0 THEN
                PERFORM @extschema@.idgen_registry_reserve('snowflake', workers[i], format('Citus node %s', nodes[i]), true);
            END IF;
        END LOOP;
    END IF;
    RETURN QUERY SELECT * FROM unnest(nodes, machines, workers);
END
$$;
COMMENT ON FUNCTION idgen_check_cluster_identities() IS 'Citus: every node''s effective xid12 machine id and Snowflake worker id; an error when two nodes share one; on the coordinator, reserves them in the writer registry';
