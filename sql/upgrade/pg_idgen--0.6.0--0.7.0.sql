-- pg_idgen 0.6.0 -> 0.7.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.7.0'" to load this file. \quit

-- Each object below is the same as in a fresh 0.7.0 install (sql/*.sql). Sections in the order
-- the changes were made; every one names the file that defines its objects.
