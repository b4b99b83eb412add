--! portable/frame/upgrade_before.sql: an upgrade's first piece after the schema check: the version
--! it starts from (@FROM@), and the edition's relations and functions before it (for upgrade_after.sql).
DO $pg_idgen_before$
BEGIN
    IF @extschema@.idgen_portable_version() OPERATOR(pg_catalog.<>) '@FROM@' THEN
        RAISE EXCEPTION 'pg_idgen portable: schema @extschema@ has version %; this upgrade starts from @FROM@',
                        @extschema@.idgen_portable_version()
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM pg_catalog.set_config('idgen_portable.upgrade_relations',
        (SELECT pg_catalog.array_agg(c.oid)::text FROM pg_catalog.pg_class c
          WHERE c.relnamespace = '@extschema@'::pg_catalog.regnamespace), true);
    PERFORM pg_catalog.set_config('idgen_portable.upgrade_functions',
        (SELECT pg_catalog.array_agg(p.oid)::text FROM pg_catalog.pg_proc p
          WHERE p.pronamespace = '@extschema@'::pg_catalog.regnamespace), true);
END
$pg_idgen_before$;
