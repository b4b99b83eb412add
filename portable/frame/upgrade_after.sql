--! portable/frame/upgrade_after.sql: an upgrade's last piece: what the install's last step
--! (portable/src/99_privileges.sql) does, for the objects the upgrade created: grants that the
--! installing role's default privileges gave to other roles are revoked, and no SECURITY DEFINER
--! function is left executable by PUBLIC. Existing objects keep their grants.
DO $pg_idgen_after$
DECLARE
    nsp pg_catalog.oid := '@extschema@'::pg_catalog.regnamespace::pg_catalog.oid;
    known_relations pg_catalog.oid[] := pg_catalog.current_setting('idgen_portable.upgrade_relations')::pg_catalog.oid[];
    known_functions pg_catalog.oid[] := pg_catalog.current_setting('idgen_portable.upgrade_functions')::pg_catalog.oid[];
    r record;
    left_over text;
BEGIN
    FOR r IN
        SELECT pg_catalog.format('%s ON %s %s', a.privilege_type,
                   CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END, c.oid::pg_catalog.regclass) AS what,
               CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::pg_catalog.regrole::text END AS who
          FROM pg_catalog.pg_class c, pg_catalog.aclexplode(c.relacl) a
         WHERE c.relnamespace = nsp AND a.grantee <> c.relowner
           AND c.oid <> ALL (COALESCE(known_relations, '{}'))
        UNION ALL
        SELECT pg_catalog.format('EXECUTE ON FUNCTION %s', p.oid::pg_catalog.regprocedure),
               a.grantee::pg_catalog.regrole::text
          FROM pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
         WHERE p.pronamespace = nsp AND a.grantee <> p.proowner AND a.grantee <> 0
           AND p.oid <> ALL (COALESCE(known_functions, '{}'))
    LOOP
        EXECUTE pg_catalog.format('REVOKE %s FROM %s CASCADE', r.what, r.who);
    END LOOP;
    SELECT pg_catalog.string_agg(p.oid::pg_catalog.regprocedure::text, ', ') INTO left_over
      FROM pg_catalog.pg_proc p
     WHERE p.pronamespace = nsp AND p.prosecdef AND p.oid <> ALL (COALESCE(known_functions, '{}'))
       AND (p.proacl IS NULL OR EXISTS (SELECT FROM pg_catalog.aclexplode(p.proacl) a WHERE a.grantee = 0));
    IF left_over IS NOT NULL THEN
        RAISE EXCEPTION 'pg_idgen portable: the upgrade leaves SECURITY DEFINER functions executable by PUBLIC: %', left_over
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'A gate has EXECUTE revoked from PUBLIC (portable/README.md "Security"): REVOKE it in the upgrade.';
    END IF;
END
$pg_idgen_after$;
