--! portable/frame/version.sql: the edition's version function, last in an install and an upgrade.
CREATE OR REPLACE FUNCTION @extschema@.idgen_portable_version() RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURN '@VERSION@';
