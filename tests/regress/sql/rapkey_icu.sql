-- In a database whose default collation is ICU en-US, rapkey keeps byte order.
SELECT current_database() AS regress_db \gset
CREATE DATABASE rapkey_icu LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8' TEMPLATE template0;
\c rapkey_icu
CREATE EXTENSION pg_idgen;
-- PostgreSQL 17 renamed daticulocale to datlocale: read whichever the server has.
SELECT datlocprovider, coalesce(to_jsonb(d) ->> 'datlocale', to_jsonb(d) ->> 'daticulocale') AS icu_locale
FROM pg_database d WHERE datname = current_database();
CREATE TABLE keys (k rapkey PRIMARY KEY, t text);
INSERT INTO keys
SELECT k, k FROM (
    SELECT rapkey_build('ord', c, r, m, n::text) AS k
    FROM unnest(ARRAY['cn', 'us']) c, unnest(ARRAY['sh', 'bj', 'sh0']) r,
         unnest(ARRAY['202406', '202407', '2024071', '202408']) m, generate_series(1, 300) n) s;
VACUUM ANALYZE keys;
-- The column sorts in byte order, whatever the database's collation.
SELECT pg_typeof(k), pg_collation_for(k) FROM keys LIMIT 1;
SELECT count(*) FILTER (WHERE by_key <> by_bytes) AS order_differences
FROM (SELECT row_number() OVER (ORDER BY k) AS by_key,
             row_number() OVER (ORDER BY convert_to(k, 'UTF8')) AS by_bytes FROM keys) s;
-- The prefix range on the rapkey column equals the byte-order answer.
SELECT count(*) AS rapkey_range FROM keys
WHERE k >= rapkey_prefix_lo('ord.cn.sh.202407') AND k < rapkey_prefix_hi('ord.cn.sh.202407');
SELECT count(*) AS byte_order_range FROM keys
WHERE t COLLATE "C" >= rapkey_prefix_lo('ord.cn.sh.202407') AND t COLLATE "C" < rapkey_prefix_hi('ord.cn.sh.202407');
SELECT count(*) AS icu_text_range FROM keys
WHERE t >= 'ord.cn.sh.202407-' AND t < 'ord.cn.sh.202407/';
EXPLAIN (COSTS OFF)
SELECT k FROM keys WHERE k >= rapkey_prefix_lo('ord.cn.sh.202407') AND k < rapkey_prefix_hi('ord.cn.sh.202407');
EXPLAIN (COSTS OFF) SELECT k FROM keys WHERE k LIKE 'ord.cn.sh.202407%';
SELECT count(*) AS like_rows FROM keys WHERE k LIKE 'ord.cn.sh.202407.%';
\c :regress_db
DROP DATABASE rapkey_icu;
