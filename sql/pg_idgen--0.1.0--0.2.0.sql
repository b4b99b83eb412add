-- pg_idgen 0.1.0 -> 0.2.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.2.0'" to load this file. \quit

-- 0.2.0 changes no SQL object. Its library keeps every C symbol that 0.1.0's catalog
-- entries name, and adds soft input errors to xid12_in on PostgreSQL 16 and later.
