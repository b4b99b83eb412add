-- One install per database (below). And the install schema must be the installing role's alone:
-- its functions run as that role (the gates are SECURITY DEFINER) and call each other by
-- schema-qualified name, so a role that can CREATE in the schema could plant objects they might
-- resolve to. Refused: a schema owned by
-- another role, or on which another role or PUBLIC has CREATE (PostgreSQL 14's public schema),
-- or that holds objects another role made there (while it could CREATE).
DO $$
DECLARE
    nsp pg_catalog.oid := '@extschema@'::pg_catalog.regnamespace::pg_catalog.oid;
    owner pg_catalog.oid;
    creators text;
BEGIN
    -- One install per database, plain or TLE, in any schema: two would share the session's
    -- caches and the machine and worker ids, so repeat each other's ids. Another schema's
    -- pg_idgen (its version function, or an extension pg_idgen: native or TLE) is refused
    -- before anything is created. (An install over its own schema is the plain script's guard's.)
    SELECT pg_catalog.string_agg(pg_catalog.format('%I (%s)', o.nspname, o.what), ', ' ORDER BY o.nspname)
      INTO creators
      FROM (SELECT n.nspname, 'pg_idgen portable, owner ' || p.proowner::pg_catalog.regrole::text
              FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
             WHERE p.proname = 'idgen_portable_version' AND p.pronargs = 0 AND p.pronamespace <> nsp
            UNION
            SELECT n.nspname, 'extension pg_idgen ' || e.extversion
              FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
             WHERE e.extname = 'pg_idgen' AND e.extnamespace <> nsp) AS o(nspname, what);
    IF creators IS NOT NULL THEN
        RAISE EXCEPTION 'pg_idgen portable: this database already has pg_idgen, in schema %', creators
            USING ERRCODE = 'duplicate_object',
                  HINT = 'One install per database (two would repeat each other''s ids): use that one, '
                         'or drop it first (DROP EXTENSION pg_idgen, or DROP SCHEMA ... CASCADE for the plain script).';
    END IF;
    SELECT n.nspowner INTO owner FROM pg_catalog.pg_namespace n WHERE n.oid = nsp;
    -- One exception: a superuser's CREATE EXTENSION (the restore of a full dump, which makes the
    -- schema's owner the owner's before it creates the extension). The schema's owner cannot
    -- drop or replace an extension's members, and every call between them is exact-typed.
    IF owner <> (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER)
       AND NOT (EXISTS (SELECT FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_idgen' AND e.extnamespace = nsp)
                AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER)) THEN
        RAISE EXCEPTION 'pg_idgen portable: schema @extschema@ is owned by %, not by the installing role %',
                        owner::pg_catalog.regrole, CURRENT_USER
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Install into a schema the installing role owns and on which no other role has CREATE.';
    END IF;
    SELECT pg_catalog.string_agg(CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE a.grantee::pg_catalog.regrole::text END, ', ')
      INTO creators
      FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
     WHERE n.oid = nsp AND a.privilege_type = 'CREATE' AND a.grantee <> owner;
    IF creators IS NOT NULL THEN
        RAISE EXCEPTION 'pg_idgen portable: other roles can CREATE in schema @extschema@: %', creators
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'REVOKE CREATE ON SCHEMA @extschema@ FROM those roles, or install into a schema of its own.';
    END IF;
    -- What a role made there while it could CREATE stays after the REVOKE, and is as good as
    -- planted: a function an SQL-standard body binds to when it is created (to_timestamp(bigint)
    -- before pg_catalog's to_timestamp(double precision)), or, for the plain script's native
    -- piece, a type (a domain timestamptz). Refused: any object in the schema owned by a role
    -- that is neither the installing role nor a superuser.
    SELECT pg_catalog.string_agg(pg_catalog.format('%s %s (owner %s)', i.type, i.identity, o.owner::pg_catalog.regrole),
                                 ', ' ORDER BY o.classid, o.objid)
      INTO creators
      FROM (SELECT 'pg_catalog.pg_class'::pg_catalog.regclass, c.oid, c.relowner FROM pg_catalog.pg_class c
             WHERE c.relnamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_type'::pg_catalog.regclass, t.oid, t.typowner FROM pg_catalog.pg_type t
             WHERE t.typnamespace = nsp AND t.typrelid = 0 -- a relation's row type: the relation says it
               AND NOT EXISTS (SELECT FROM pg_catalog.pg_type e WHERE e.typarray = t.oid)
            UNION ALL
            SELECT 'pg_catalog.pg_proc'::pg_catalog.regclass, p.oid, p.proowner FROM pg_catalog.pg_proc p
             WHERE p.pronamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_operator'::pg_catalog.regclass, op.oid, op.oprowner FROM pg_catalog.pg_operator op
             WHERE op.oprnamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_collation'::pg_catalog.regclass, co.oid, co.collowner FROM pg_catalog.pg_collation co
             WHERE co.collnamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_conversion'::pg_catalog.regclass, cv.oid, cv.conowner FROM pg_catalog.pg_conversion cv
             WHERE cv.connamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_opclass'::pg_catalog.regclass, oc.oid, oc.opcowner FROM pg_catalog.pg_opclass oc
             WHERE oc.opcnamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_opfamily'::pg_catalog.regclass, f.oid, f.opfowner FROM pg_catalog.pg_opfamily f
             WHERE f.opfnamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_ts_config'::pg_catalog.regclass, tc.oid, tc.cfgowner FROM pg_catalog.pg_ts_config tc
             WHERE tc.cfgnamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_ts_dict'::pg_catalog.regclass, td.oid, td.dictowner FROM pg_catalog.pg_ts_dict td
             WHERE td.dictnamespace = nsp
            UNION ALL
            SELECT 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, s.oid, s.stxowner FROM pg_catalog.pg_statistic_ext s
             WHERE s.stxnamespace = nsp) AS o(classid, objid, owner),
           pg_catalog.pg_identify_object(o.classid, o.objid, 0) AS i -- always schema-qualified
     WHERE o.owner <> (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER)
       AND NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.oid = o.owner);
    IF creators IS NOT NULL THEN
        RAISE EXCEPTION 'pg_idgen portable: schema @extschema@ holds objects of other roles: %', creators
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Drop them or move them out (ALTER ... SET SCHEMA), or install into a schema of its own: '
                         'they could stand in for names the edition uses.';
    END IF;
END
$$;
