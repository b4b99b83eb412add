-- Words of errors, as native says them (crates/idgen-core/src/words.rs rules, written anew).

-- A value quoted for a message: "value", or past 40 characters its first 40 characters then
-- ..." (N characters).
CREATE FUNCTION @extschema@.idgen_quoted(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN char_length(value) <= 40 THEN '"' || value || '"'
            ELSE '"' || left(value, 40) || '..." (' || char_length(value) || ' characters)' END;

-- One character in single quotes; a control character (Unicode Cc) as '\u{a}'.
CREATE FUNCTION @extschema@.idgen_shown_char(c text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN ascii(c) < 32 OR ascii(c) BETWEEN 127 AND 159
            THEN '''\u{' || to_hex(ascii(c)) || '}'''
            ELSE '''' || c || '''' END;

-- Trims the characters Unicode calls White_Space from both ends (what native's trim does;
-- btrim alone takes only spaces). Needs a UTF8 database, as the rest of this edition.
CREATE FUNCTION @extschema@.idgen_trim(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN btrim(value, E'\t\n\u000b\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000');

-- ASCII-only lowercase (lower() would also fold non-ASCII letters, which native keeps).
CREATE FUNCTION @extschema@.idgen_ascii_lower(value text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN translate(value, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');

-- A timestamp's unix second (floor), or native's 22008 for an infinity.
CREATE FUNCTION @extschema@.idgen_unix_seconds(ts timestamptz) RETURNS bigint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN CASE WHEN isfinite(ts) THEN floor(extract(epoch FROM ts))::bigint
            ELSE @extschema@.idgen_raise('22008', 'timestamp out of range: '
                 || CASE WHEN ts = '-infinity'::timestamptz THEN '-infinity' ELSE 'infinity' END
                 || ' has no id') END;
