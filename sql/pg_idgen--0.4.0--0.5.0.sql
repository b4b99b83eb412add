-- pg_idgen 0.4.0 -> 0.5.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.5.0'" to load this file. \quit

-- Each object below is the same as in a fresh 0.5.0 install (sql/*.sql). Sections in the order
-- the changes were made; every one names the file that defines its objects.

-- Assignment casts from text and varchar to xid12 (sql/xid12.sql, "Casts").
CREATE CAST (pg_catalog.text AS xid12) WITH INOUT AS ASSIGNMENT;
CREATE CAST (pg_catalog.varchar AS xid12) WITH INOUT AS ASSIGNMENT;
