-- PostgreSQL 17+: COPY … (ON_ERROR ignore) skips rows whose xid12 is malformed.
CREATE TABLE copied_ids (id xid12, note text);
COPY copied_ids FROM STDIN (ON_ERROR ignore);
9m4e2mr0ui3e8a215n4g	lowercase
zz	too short
9m4e2mr0ui3e8a215n4h	last character not canonical
9M4E2MR0UI3E8A215N5G	uppercase
9m4e2mr0ui3e8a215n!g	outside the alphabet
\.
SELECT id, note FROM copied_ids ORDER BY id;
-- Without ON_ERROR the first bad row fails the load, with the usual error.
\set SHOW_CONTEXT never
COPY copied_ids FROM STDIN;
9m4e2mr0ui3e8a215n6g	fine
zz	too short
\.
SELECT count(*) AS rows_after_failed_copy FROM copied_ids;
-- rapkey keeps its detailed CHECK error, which is a hard error: ON_ERROR ignore does not skip
-- a bad key, the load stops and says which character was expected. To sift bad keys, COPY
-- into a text column and keep the rows where rapkey_is_valid() is true.
CREATE TABLE copied_keys (k rapkey);
COPY copied_keys FROM STDIN (ON_ERROR ignore);
ord.cn.sh.202407.8842-2
ord.cn.sh.202407.8842-3
\.
SELECT count(*) AS keys_after_failed_copy FROM copied_keys;
CREATE TABLE staged_keys (k text);
COPY staged_keys FROM STDIN;
ord.cn.sh.202407.8842-2
ord.cn.sh.202407.8842-3
usr.cn.10001-x
\.
INSERT INTO copied_keys SELECT k FROM staged_keys WHERE rapkey_is_valid(k);
SELECT k FROM copied_keys ORDER BY k;
DROP TABLE copied_ids, copied_keys, staged_keys;
-- SQL/JSON's ON ERROR clauses (17+) read xid12 through the same soft path.
SELECT JSON_VALUE(jsonb '{"id": "9m4e2mr0ui3e8a215n4g"}', '$.id' RETURNING xid12) AS read,
       JSON_VALUE(jsonb '{"id": "zz"}', '$.id' RETURNING xid12 NULL ON ERROR) AS null_on_error,
       JSON_VALUE(jsonb '{"id": "zz"}', '$.id' RETURNING xid12 DEFAULT '00000000000000000000' ON ERROR) AS default_on_error;
SELECT JSON_VALUE(jsonb '{"id": "zz"}', '$.id' RETURNING xid12 ERROR ON ERROR);
