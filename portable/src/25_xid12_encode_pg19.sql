-- xid12_encode on PostgreSQL 19 and later, where encode(bytes, 'base32hex') is built in:
-- lower(rtrim(encode(b, 'base32hex'), '=')) is the xid12 text of the 12 bytes b (rs/xid's
-- alphabet is base32hex's, in lowercase, without the padding). The path is chosen at install
-- time by the server's version: on 14 .. 18, which have no such encoding (22023), the one of
-- portable/src/20_xid12.sql stays. tests/portable/test_portable.py checks which one an install
-- has and, on 19, the expression against tests/vectors/xid12.json. (A plain install's
-- pg_dump keeps the body it was made with: restore it into the same or a later major version;
-- the TLE runs this again in the database it is created in.)
DO $$
BEGIN
    IF pg_catalog.current_setting('server_version_num')::integer >= 190000 THEN
        EXECUTE $sql$
CREATE OR REPLACE FUNCTION @extschema@.xid12_encode(hi bigint, lo bigint) RETURNS @extschema@.xid12
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN lower(rtrim(encode(substr(int8send(hi), 2, 7) || substr(int8send(lo), 4, 5), 'base32hex'), '='))
$sql$;
    END IF;
END
$$;
