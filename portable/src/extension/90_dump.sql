-- The extension packaging only (pg_tle), after every source: what pg_dump must keep of an
-- extension's state is marked here, or a restore would start it anew. The configuration row
-- (folded into the new one by its trigger), the rapkey counters and the three sequences.
SELECT pg_catalog.pg_extension_config_dump('@extschema@.idgen_config', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.rapkey_counter', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.idgen_xid12_seq', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.idgen_snowflake_seq', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@.idgen_xid12_backfill_seq', '');
