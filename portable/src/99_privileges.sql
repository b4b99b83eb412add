-- Last: the installing role's default privileges (ALTER DEFAULT PRIVILEGES … GRANT … TO
-- others) gave the new objects to other roles; the script revokes only from PUBLIC. So every
-- grant on the edition's relations (tables, sequences) to any role but the owner is revoked,
-- PUBLIC included, and on its functions to any role but the owner and PUBLIC; then EXECUTE is
-- revoked from PUBLIC again where the edition means it (the gates and the helpers that reach
-- the shared state). The intended grants are none (the owner grants them afterwards,
-- portable/README.md "Security") but native's: SELECT on idgen_registry_pool to PUBLIC
-- (sql/registry.sql), and on idgen_backfill_progress (sql/backfill.sql) SELECT and INSERT to
-- PUBLIC (and UPDATE of its progress columns), each role's rows guarded by its row-level
-- security policies; any other grant on it (UPDATE or DELETE of the table, which LOCK TABLE
-- takes as leave to stop every run; TRUNCATE, which ignores those policies) goes too.
-- The edition's objects: those this transaction created (plain script), or members of the
-- extension (TLE).
DO $$
DECLARE
    nsp pg_catalog.oid := '@extschema@'::pg_catalog.regnamespace::pg_catalog.oid;
    me pg_catalog.xid := pg_catalog.xid(pg_catalog.pg_current_xact_id());
    ext pg_catalog.oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_idgen'
                            AND e.extnamespace = '@extschema@'::pg_catalog.regnamespace);
    r record;
    left_over text;
BEGIN
    FOR r IN
        SELECT pg_catalog.format('%s ON %s %s', a.privilege_type,
                   CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.oid::pg_catalog.regclass) AS what,
               CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::pg_catalog.regrole::text END AS who
          FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
         WHERE c.relnamespace = nsp AND a.grantee <> c.relowner
           -- The grants the edition makes (native's): the registry's pools are readable by all;
           -- each role reads and writes its own backfill progress rows.
           AND NOT (c.relname = 'idgen_registry_pool' AND a.grantee = 0 AND a.privilege_type = 'SELECT')
           AND NOT (c.relname = 'idgen_backfill_progress' AND a.grantee = 0
                    AND a.privilege_type IN ('SELECT', 'INSERT'))
           AND (c.xmin = me OR EXISTS (SELECT FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                                       AND d.objid = c.oid AND d.refobjid = ext AND d.deptype = 'e'))
        UNION ALL
        -- Types: USAGE lets a role create operators and functions on them (20_xid12.sql).
        SELECT pg_catalog.format('USAGE ON %s %s', CASE WHEN t.typtype = 'd' THEN 'DOMAIN' ELSE 'TYPE' END,
                                 t.oid::pg_catalog.regtype),
               a.grantee::pg_catalog.regrole::text
          FROM pg_catalog.pg_type t, pg_catalog.aclexplode(t.typacl) a
         WHERE t.typnamespace = nsp AND a.grantee <> t.typowner AND a.grantee <> 0
           AND NOT EXISTS (SELECT FROM pg_catalog.pg_type e WHERE e.typarray = t.oid)
           AND (t.xmin = me OR EXISTS (SELECT FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
                                       AND d.objid = t.oid AND d.refobjid = ext AND d.deptype = 'e'))
        UNION ALL
        SELECT pg_catalog.format('EXECUTE ON ROUTINE %s', p.oid::pg_catalog.regprocedure),
               a.grantee::pg_catalog.regrole::text
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE p.pronamespace = nsp AND a.grantee <> p.proowner AND a.grantee <> 0
           AND (p.xmin = me OR EXISTS (SELECT FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
                                       AND d.objid = p.oid AND d.refobjid = ext AND d.deptype = 'e'))
    LOOP
        EXECUTE pg_catalog.format('REVOKE %s FROM %s CASCADE', r.what, r.who);
    END LOOP;
    REVOKE EXECUTE ON FUNCTION @extschema@.gen_xid12(), @extschema@.gen_xid12(timestamptz),
        @extschema@.gen_snowflake(), @extschema@.rapkey_next(text),
        @extschema@.idgen_sequence_jump(regclass, regclass, regclass, bigint, boolean),
        @extschema@.idgen_xid12_session(), @extschema@.idgen_xid12_backfill_session(),
        @extschema@.idgen_snowflake_worker(), @extschema@.idgen_snowflake_epoch() FROM PUBLIC;
    REVOKE USAGE ON DOMAIN @extschema@.xid12, @extschema@.rapkey FROM PUBLIC;
    SELECT pg_catalog.string_agg(pg_catalog.format('%s on %s', a.privilege_type, c.oid::pg_catalog.regclass), ', ')
      INTO left_over
      FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
     WHERE c.relnamespace = nsp AND a.grantee <> c.relowner
       AND (c.relname IN ('idgen_config', 'rapkey_counter', 'idgen_xid12_seq', 'idgen_snowflake_seq', 'idgen_xid12_backfill_seq',
                          'idgen_xid12_jumps', 'idgen_snowflake_jumps', 'idgen_xid12_jumper', 'idgen_snowflake_jumper')
            OR c.relname LIKE 'idgen\_registry\_%' AND NOT (c.relname = 'idgen_registry_pool' AND a.grantee = 0 AND a.privilege_type = 'SELECT')
            OR (c.relname = 'idgen_backfill_progress'
                AND NOT (a.grantee = 0 AND a.privilege_type IN ('SELECT', 'INSERT'))));
    SELECT pg_catalog.concat_ws(', ', left_over, pg_catalog.string_agg(pg_catalog.format('EXECUTE on %s', p.oid::pg_catalog.regprocedure), ', '))
      INTO left_over
      FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
     WHERE p.oid IN ('@extschema@.gen_xid12()'::pg_catalog.regprocedure, '@extschema@.gen_xid12(timestamptz)'::pg_catalog.regprocedure,
                     '@extschema@.gen_snowflake()'::pg_catalog.regprocedure, '@extschema@.rapkey_next(text)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_sequence_jump(regclass, regclass, regclass, bigint, boolean)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_xid12_session()'::pg_catalog.regprocedure,
                     '@extschema@.idgen_xid12_backfill_session()'::pg_catalog.regprocedure,
                     '@extschema@.idgen_snowflake_worker()'::pg_catalog.regprocedure,
                     '@extschema@.idgen_snowflake_epoch()'::pg_catalog.regprocedure,
                     -- The writer registry's gates and the DBA's functions (sql/registry.sql):
                     -- EXECUTE goes to writers by idgen_pool_allow, after the install.
                     '@extschema@.idgen_acquire(text, text, interval, text)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_renew(bigint, bigint, interval)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_release(bigint, bigint, timestamptz)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_report(bigint, bigint, text, bigint, timestamptz, bigint)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_reserve(text, integer, text)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_pool_allow(text, regrole, integer)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_pool_disallow(text, regrole)'::pg_catalog.regprocedure,
                     '@extschema@.idgen_registry_lift_fence()'::pg_catalog.regprocedure,
                     '@extschema@.idgen_registry_check_origin()'::pg_catalog.regprocedure)
       AND a.grantee <> p.proowner;
    -- USAGE on the types for PUBLIC (the owner's grants to roles it names stay, in an upgrade).
    SELECT pg_catalog.concat_ws(', ', left_over, pg_catalog.string_agg(pg_catalog.format('USAGE on type %s to PUBLIC', t.oid::pg_catalog.regtype), ', '))
      INTO left_over
      FROM pg_catalog.pg_type t, pg_catalog.aclexplode(t.typacl) a
     WHERE t.oid IN ('@extschema@.xid12'::pg_catalog.regtype, '@extschema@.rapkey'::pg_catalog.regtype)
       AND a.grantee = 0;
    IF left_over <> '' THEN
        RAISE EXCEPTION 'pg_idgen portable: grants left to other roles after the install: %', left_over
            USING ERRCODE = 'insufficient_privilege';
    END IF;
END
$$;
