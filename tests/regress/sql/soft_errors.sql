-- PostgreSQL 16+: xid12's input function reports bad input as a soft error when the caller
-- asks for one, as uuid_in does: pg_input_is_valid() and pg_input_error_info() never fail.
SELECT input, pg_input_is_valid(input, 'xid12') AS valid
FROM (VALUES ('9m4e2mr0ui3e8a215n4g'), ('9M4E2MR0UI3E8A215N4G'), ('zz'), (''),
             ('9m4e2mr0ui3e8a215n4h'), ('9m4e2mr0ui3e8a215n4w'), ('9m4e2mr0ui3e8a215n4g ')) v(input);
SELECT * FROM pg_input_error_info('zz', 'xid12');
SELECT * FROM pg_input_error_info('9m4e2mr0ui3e8a215n4h', 'xid12');
-- Elements of an array are read through the same soft path.
SELECT pg_input_is_valid('{9m4e2mr0ui3e8a215n4g,9m4e2mr0ui3e8a215n5g}', 'xid12[]') AS good_array,
       pg_input_is_valid('{9m4e2mr0ui3e8a215n4g,oops}', 'xid12[]') AS bad_array;
-- The soft error is the hard error: same message, DETAIL, HINT and SQLSTATE.
CREATE FUNCTION pg_temp.hard_error(input text, OUT message text, OUT detail text, OUT hint text,
                                   OUT sql_error_code text) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM input::xid12;
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS message = MESSAGE_TEXT, detail = PG_EXCEPTION_DETAIL,
        hint = PG_EXCEPTION_HINT, sql_error_code = RETURNED_SQLSTATE;
END $$;
SELECT left(input, 24) AS input, (s.message, s.detail, coalesce(s.hint, ''), s.sql_error_code)
              = (h.message, h.detail, h.hint, h.sql_error_code) AS same_error
FROM (VALUES ('zz'), (''), ('9m4e2mr0ui3e8a215n4h'), ('9m4e2mr0ui3e8a215n4!'), (repeat('x', 200))) v(input),
     pg_input_error_info(input, 'xid12') s, pg_temp.hard_error(input) h;
-- Ordinary casts still fail as before.
SELECT 'zz'::xid12;
-- rapkey: the domain's CHECK explains what is wrong (expected check character), and an
-- explanation needs an error; so pg_input_is_valid() is true for a valid key and raises that
-- same detailed error (23514) for an invalid one. rapkey_is_valid() is the test that never fails.
SELECT pg_input_is_valid('ord.cn.sh.202407.8842-2', 'rapkey') AS valid_key;
SELECT pg_input_is_valid('ord.cn.sh.202407.8842-3', 'rapkey');
SELECT rapkey_is_valid('ord.cn.sh.202407.8842-3') AS checked_without_error;
