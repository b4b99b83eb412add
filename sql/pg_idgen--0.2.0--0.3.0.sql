-- pg_idgen 0.2.0 -> 0.3.0.
\echo Use "ALTER EXTENSION pg_idgen UPDATE TO '0.3.0'" to load this file. \quit
