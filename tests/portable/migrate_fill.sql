-- tests/portable/migrate_fill.sql: the application data that tests/portable/migrate.sh moves
-- between the two editions. The same script fills a portable and a native database: both
-- have their objects in schema idgen under the same names. Run by the tables' owner.
\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE TABLE customer (
    id idgen.xid12 PRIMARY KEY DEFAULT idgen.gen_xid12(),
    key idgen.rapkey NOT NULL UNIQUE DEFAULT idgen.rapkey_next('cust'),
    sf bigint NOT NULL UNIQUE DEFAULT idgen.gen_snowflake(),
    name text NOT NULL
);
CREATE TABLE orders (
    id idgen.xid12 PRIMARY KEY DEFAULT idgen.gen_xid12(),
    customer_id idgen.xid12 NOT NULL REFERENCES customer (id),
    sf bigint NOT NULL UNIQUE DEFAULT idgen.gen_snowflake(),
    ref idgen.rapkey UNIQUE,
    amount numeric NOT NULL
);
CREATE INDEX orders_customer_id ON orders (customer_id);
CREATE INDEX orders_id_brin ON orders USING brin (id);
-- Hash-partitioned on the xid12: the two editions hash it differently (text's hash against
-- the native type's), so a row's partition can change on the way.
CREATE TABLE event (
    id idgen.xid12 NOT NULL DEFAULT idgen.gen_xid12(),
    sf bigint NOT NULL DEFAULT idgen.gen_snowflake(),
    customer_id idgen.xid12 REFERENCES customer (id),
    body text,
    PRIMARY KEY (id)
) PARTITION BY HASH (id);
CREATE TABLE event_0 PARTITION OF event FOR VALUES WITH (MODULUS 4, REMAINDER 0);
CREATE TABLE event_1 PARTITION OF event FOR VALUES WITH (MODULUS 4, REMAINDER 1);
CREATE TABLE event_2 PARTITION OF event FOR VALUES WITH (MODULUS 4, REMAINDER 2);
CREATE TABLE event_3 PARTITION OF event FOR VALUES WITH (MODULUS 4, REMAINDER 3);
CREATE INDEX event_time ON event (idgen.xid12_time(id));
CREATE INDEX event_sf ON event (sf);
-- Ids no generator makes: the first and the last possible, the extreme Snowflake values.
CREATE TABLE edge (
    id idgen.xid12 PRIMARY KEY,
    sf bigint NOT NULL UNIQUE,
    note text
);

-- 2 000 customers now, 200 with ids of past hours (a backfill), 6 000 orders, 4 000 events.
INSERT INTO customer (name) SELECT 'customer ' || g FROM generate_series(1, 2000) g;
INSERT INTO customer (id, name)
SELECT idgen.gen_xid12(now() - interval '400 days' + g * interval '1 hour'), 'backfilled ' || g
FROM generate_series(1, 200) g;
CREATE TEMP TABLE numbered AS SELECT id, row_number() OVER (ORDER BY id) - 1 AS n FROM customer;
INSERT INTO orders (customer_id, ref, amount)
SELECT c.id, CASE WHEN g % 2 = 0 THEN idgen.rapkey_build('ord', 'eu', g::text) END, g * 1.25
FROM generate_series(1, 6000) g JOIN numbered c ON c.n = g % 2200;
INSERT INTO event (customer_id, body)
SELECT c.id, 'event ' || g FROM generate_series(1, 4000) g JOIN numbered c ON c.n = g % 2200;
INSERT INTO edge VALUES ('00000000000000000000', 0, 'smallest'),
                        ('vvvvvvvvvvvvvvvvvvvg', 9223372036854775807, 'largest');
DROP TABLE numbered;
ANALYZE customer, orders, event, edge;
-- A view with a cast to bytea: each edition reads id::bytea its own way (12 bytes native, the
-- 20 characters portable), and pg_dump writes the cast as it is.
CREATE VIEW customer_bytes AS SELECT id, id::bytea AS b FROM customer;
