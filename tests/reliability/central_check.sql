-- Run on the central node once both edges' rows arrived (scripts/reliability.sh). Edge N was
-- configured with pg_idgen.machine_id = N and pg_idgen.worker_id = N and numbered its rapkeys
-- under the prefix ord.edgeN.
DO $$
DECLARE
    bad bigint;
BEGIN
    SELECT count(*) INTO bad FROM events
     WHERE xid12_machine(x) <> substr(int4send(edge), 2) OR snowflake_worker(s) <> edge
        OR rapkey_type(r) <> 'ord' OR (rapkey_segments(r))[1] <> 'edge' || edge;
    IF bad > 0 THEN
        RAISE EXCEPTION '% rows do not carry the machine id, worker id or prefix of their edge', bad;
    END IF;
    -- Several clients took rapkey numbers on one prefix at once: each number once, none skipped.
    SELECT count(*) INTO bad FROM (
        SELECT edge FROM events GROUP BY edge
        HAVING min((rapkey_segments(r))[2]::bigint) <> 1
            OR max((rapkey_segments(r))[2]::bigint) <> count(*)
            OR count(DISTINCT (rapkey_segments(r))[2]) <> count(*)) e;
    IF bad > 0 THEN
        RAISE EXCEPTION 'the rapkey numbers of % edges are not 1 .. their row count', bad;
    END IF;
END
$$;
