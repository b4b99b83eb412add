-- The install schema must be the installing role's alone: its functions run as that role (the
-- gates are SECURITY DEFINER) and call each other by schema-qualified name, so a role that can
-- CREATE in the schema could plant objects they might resolve to. Refused: a schema owned by
-- another role, or on which another role or PUBLIC has CREATE (PostgreSQL 14's public schema).
DO $$
DECLARE
    nsp pg_catalog.oid := '@extschema@'::pg_catalog.regnamespace::pg_catalog.oid;
    owner pg_catalog.oid;
    creators text;
BEGIN
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
END
$$;
