-- In a LATIN1 database, non-ASCII input is invalid input, never a crash or a Rust panic.
SELECT current_database() AS regress_db \gset
CREATE DATABASE idgen_latin1 ENCODING 'LATIN1' LOCALE 'C' TEMPLATE template0;
\c idgen_latin1
SET client_encoding = UTF8;
SELECT convert_to('é', 'LATIN1') AS e_acute_is_one_byte;
SET client_min_messages = warning;
CREATE EXTENSION pg_idgen;
RESET client_min_messages;
SELECT rapkey_is_valid('ord.cé.sh-2') AS valid, rapkey_is_valid('ord.cn.sh.202407.8842-2') AS ascii_valid;
SELECT 'ord.cé.sh-2'::rapkey;
SELECT to_rapkey('ord.cé.sh-2');
SELECT rapkey_build('ord', 'cé');
SELECT rapkey_check_char('ord.cé');
SELECT rapkey_prefix_lo('ord.cé');
SELECT 'ord.cn.sh.202407.8842-2'::rapkey, rapkey_segments('ord.cn.sh.202407.8842-2');
SELECT '9m4e2mr0ui3e8a215n4é'::xid12;
SELECT '9m4e2mr0ui3e8a215n4g'::xid12;
\c :regress_db
DROP DATABASE idgen_latin1;
