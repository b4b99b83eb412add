-- tests/portable/migrate_continue.sql: after a move (tests/portable/migrate.sh), the target's
-- generators continue: every new xid12 sorts after every moved one, every new Snowflake id is
-- greater than every moved one and carries the worker id :worker, rapkey_next continues the
-- moved counter, and nothing repeats. Run by the tables' owner: psql -v worker=N -f this.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE TEMP TABLE expect AS SELECT :'worker'::integer AS worker;

-- The one wait the procedure has (portable/MIGRATING.md): the newest moved xid12's second and
-- the newest moved Snowflake id's millisecond must be over before the first new id. It is
-- usually over long before (the dump, or the catch-up, took longer); this says how long it was.
SELECT greatest(0, extract(epoch FROM greatest(
           (SELECT idgen.xid12_time(max(id)) FROM (SELECT max(id) AS id FROM customer UNION ALL
                SELECT max(id) FROM orders UNION ALL SELECT max(id) FROM event) s) + interval '1 second',
           (SELECT idgen.snowflake_time(max(sf)) FROM (SELECT max(sf) AS sf FROM customer UNION ALL
                SELECT max(sf) FROM orders UNION ALL SELECT max(sf) FROM event) s) + interval '1 millisecond')
       - clock_timestamp()))::numeric(10, 3) AS wait_s \gset
SELECT pg_sleep(:wait_s) \g /dev/null

CREATE TEMP TABLE old_max AS
SELECT (SELECT max(id) FROM customer)::text AS customer, (SELECT max(id) FROM orders)::text AS orders,
       (SELECT max(id) FROM event)::text AS event,
       greatest((SELECT max(sf) FROM customer), (SELECT max(sf) FROM orders), (SELECT max(sf) FROM event)) AS sf,
       (SELECT last_value FROM idgen.rapkey_counter WHERE prefix = 'cust') AS cust;

INSERT INTO customer (name) SELECT 'after ' || g FROM generate_series(1, 300) g;
INSERT INTO orders (customer_id, amount) SELECT id, 1 FROM customer WHERE name LIKE 'after %';
INSERT INTO event (customer_id, body) SELECT id, 'after' FROM customer WHERE name LIKE 'after %';

CREATE TEMP TABLE fresh AS
SELECT 'customer' AS t, id::text AS id, sf FROM customer WHERE name LIKE 'after %'
UNION ALL SELECT 'orders', o.id::text, o.sf FROM orders o JOIN customer c ON c.id = o.customer_id WHERE c.name LIKE 'after %'
UNION ALL SELECT 'event', id::text, sf FROM event WHERE body = 'after';

DO $$
DECLARE
    o old_max;
    w integer := (SELECT worker FROM expect);
    n bigint;
    bad bigint;
BEGIN
    SELECT * INTO STRICT o FROM old_max;
    SELECT count(*) INTO n FROM fresh;
    IF n <> 900 THEN
        RAISE EXCEPTION 'expected 900 new rows, found %', n;
    END IF;
    SELECT count(*) INTO bad FROM fresh f
    WHERE f.id COLLATE "C" <= CASE f.t WHEN 'customer' THEN o.customer WHEN 'orders' THEN o.orders ELSE o.event END COLLATE "C"
       OR f.sf <= o.sf OR (f.sf >> 12) & 1023 <> w OR length(f.id) <> 20;
    IF bad <> 0 THEN
        RAISE EXCEPTION '% new ids do not sort after the moved ones (or carry another worker id than %)', bad, w;
    END IF;
    IF (SELECT count(DISTINCT id) FROM fresh) <> 900 OR (SELECT count(DISTINCT sf) FROM fresh) <> 900 THEN
        RAISE EXCEPTION 'a new id repeats';
    END IF;
    IF (SELECT key FROM customer WHERE name = 'after 1') <> idgen.rapkey_build('cust', (o.cust + 1)::text)
       OR (SELECT key FROM customer WHERE name = 'after 300') <> idgen.rapkey_build('cust', (o.cust + 300)::text) THEN
        RAISE EXCEPTION 'rapkey_next did not continue from % (got %)', o.cust,
            (SELECT key FROM customer WHERE name = 'after 1');
    END IF;
END
$$;

\pset format unaligned
\pset tuples_only on
SELECT format('generators continue: 900 new ids after the moved ones (waited %s s first), Snowflake worker %s, rapkey %s .. %s',
              :'wait_s', (SELECT worker FROM expect),
              (SELECT key FROM customer WHERE name = 'after 1'), (SELECT key FROM customer WHERE name = 'after 300'));
