-- After the crash and the restart: psql's standard input holds, as CSV, every row the clients
-- saw acknowledged (client, seq, x, s, r, as INSERT ... RETURNING gave them).
CREATE TEMP TABLE acked (client int, seq int, x xid12, s bigint, r text);
\copy acked FROM pstdin WITH (FORMAT csv)
DO $$
DECLARE
    bad bigint;
BEGIN
    IF (SELECT count(DISTINCT client) FROM acked) < 4 THEN
        RAISE EXCEPTION 'fewer than 4 clients saw a row acknowledged before the crash';
    END IF;
    -- Every acknowledged row survived, with the very ids its client was given.
    SELECT count(*) INTO bad FROM acked a LEFT JOIN crash c USING (client, seq)
     WHERE c.client IS NULL OR c.x <> a.x OR c.s <> a.s OR c.r <> a.r;
    IF bad > 0 THEN
        RAISE EXCEPTION '% acknowledged rows are missing or changed after the crash', bad;
    END IF;
    -- Each client's rows are 1 .. n, n its last acknowledged row or the one after (committed,
    -- its acknowledgement cut off by the crash).
    SELECT count(*) INTO bad
      FROM (SELECT client, min(seq) AS lo, max(seq) AS hi, count(*) AS n FROM crash GROUP BY client) c
      FULL JOIN (SELECT client, max(seq) AS last FROM acked GROUP BY client) a USING (client)
     WHERE c.lo <> 1 OR c.hi <> c.n OR a.last IS NULL OR c.n IS NULL OR c.n - a.last NOT IN (0, 1);
    IF bad > 0 THEN
        RAISE EXCEPTION '% clients have rows other than 1 .. their last acknowledged (+ 1)', bad;
    END IF;
END
$$;
