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
-- The writer registry: live, released and reserved grants of both kinds; one live grant's
-- token is kept to renew it after the move.
SELECT idgen_reserve('snowflake', 900, 'hand-configured');
CREATE TABLE held AS SELECT * FROM idgen_acquire('snowflake', 'moved-writer', '3 minutes');
SELECT count(*) FROM generate_series(1, 3) n, LATERAL idgen_acquire('xid12', 'moved-x-' || n, '1 hour');
SELECT idgen_release(grant_id, token, lo + interval '1 s') FROM idgen_acquire('snowflake', 'moved-released', '3 minutes');
CREATE TABLE registry_fingerprint AS
SELECT md5(string_agg(concat_ws(':', grant_id, kind, slot, writer, pool, lo, hi, reserved, released_at IS NULL),
                      ',' ORDER BY grant_id)) AS digest, max(grant_id) AS max_grant, count(*) AS grants,
       (SELECT system_identifier FROM pg_control_system()) AS system_identifier
FROM idgen_grants;
