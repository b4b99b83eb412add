-- One rule quotes a value in a message, and it is written twice: in Rust (`quoted` in
-- src/errors.rs, here through xid12's input function) and in PL/pgSQL (idgen_backfill_column
-- in sql/backfill.sql, the unknown-column error of idgen_backfill). A value of up to 40
-- characters is quoted whole; a longer one is cut after 40 and its length in characters given.
-- Both must quote every value alike.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_idgen;
RESET client_min_messages;
CREATE TABLE quoting_t (id integer PRIMARY KEY);

WITH v(value) AS (
    VALUES (''), (repeat('b', 39)), (repeat('b', 40)), (repeat('b', 41)), (repeat('b', 1000)),
           (repeat('é', 40)), (repeat('é', 41))
), quoted AS (
    SELECT value,
           substring(test_helpers.error_of(format('SELECT %L::xid12', value))
                     FROM '^22P02: invalid input syntax for type xid12: (.*)$') AS rust,
           substring(test_helpers.error_of(format('SELECT idgen_backfill_column(%L, %L)', 'quoting_t', value))
                     FROM '^42703: column (.*) of relation "public.quoting_t" does not exist$') AS plpgsql
    FROM v
)
SELECT length(value) AS chars, rust IS NOT NULL AND rust = plpgsql AS same, rust
FROM quoted ORDER BY length(value), value;

DROP TABLE quoting_t;
