-- The crash table's invariants, after recovery and again after more inserts.
DO $$
BEGIN
    -- rapkey_next takes its number in the inserting transaction: the committed numbers are
    -- 1 .. count(*), each once, and the counter agrees.
    IF (SELECT min((rapkey_segments(r))[2]::bigint) <> 1 OR max((rapkey_segments(r))[2]::bigint) <> count(*)
          FROM crash)
       OR (SELECT last_value FROM rapkey_counter WHERE prefix = 'ord.crash') <> (SELECT count(*) FROM crash) THEN
        RAISE EXCEPTION 'the committed rapkey numbers are not 1 .. %', (SELECT count(*) FROM crash);
    END IF;
END
$$;
-- Every btree index of the table: structure, order by the operator class, and every heap row
-- present (heapallindexed).
SELECT c.relname, bt_index_parent_check(c.oid, heapallindexed => true)
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
 WHERE i.indrelid = 'crash'::regclass AND am.amname = 'btree'
 ORDER BY 1;
