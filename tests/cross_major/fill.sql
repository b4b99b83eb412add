-- Run on the old major version: tables keyed by all three id kinds, under btree, hash and BRIN
-- indexes, and a fingerprint of their contents that check.sql recomputes after the move.
CREATE EXTENSION pg_idgen;
CREATE TABLE events (
    id xid12 PRIMARY KEY DEFAULT gen_xid12(),
    k rapkey UNIQUE,
    flake bigint UNIQUE DEFAULT gen_snowflake(),
    n int NOT NULL
);
CREATE INDEX events_hash ON events USING hash (id);
CREATE INDEX events_brin ON events USING brin (id);
INSERT INTO events (k, n) SELECT rapkey_next('ord.cn.sh'), g FROM generate_series(1, 20000) g;
-- Backfilled ids of past seconds from many machines and pids.
INSERT INTO events (id, k, n)
SELECT xid12_from_parts(timestamptz '2024-01-01' + g * interval '1 minute',
                        substr(decode(md5(g::text), 'hex'), 1, 3), g % 65536, g),
       rapkey_next('ord.us.ca'), 20000 + g
FROM generate_series(1, 20000) g;
CREATE TABLE fingerprint AS
SELECT md5(string_agg(concat_ws(':', id, k, flake, n), ',' ORDER BY id)) AS digest,
       max(id) AS max_id, max(flake) AS max_flake, count(*) AS row_count
FROM events;
