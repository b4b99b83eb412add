-- An edge node: generates ids locally and publishes its rows (scripts/reliability.sh).
CREATE EXTENSION pg_idgen;

-- Written by pgbench (edge_insert.pgbench) from several connections at once.
CREATE TABLE events (
    edge int NOT NULL,
    client int NOT NULL,
    x xid12 NOT NULL PRIMARY KEY,
    s bigint NOT NULL UNIQUE,
    r rapkey NOT NULL UNIQUE
);
CREATE PUBLICATION edge_pub FOR TABLE events;

-- Two edges configured with the same machine id and worker id ("twins") write here.
CREATE TABLE twin (
    edge int NOT NULL,
    s bigint NOT NULL UNIQUE,
    x xid12 NOT NULL UNIQUE
);
CREATE PUBLICATION twin_pub FOR TABLE twin;

-- Inserts one row at a time, each with new ids, from t0 until t1 (wall clock): two edges
-- given the same window generate during the same milliseconds.
CREATE FUNCTION twin_fill(edge int, t0 timestamptz, t1 timestamptz) RETURNS bigint
    LANGUAGE plpgsql AS $$
DECLARE
    n bigint := 0;
BEGIN
    PERFORM pg_sleep_until(t0);
    WHILE clock_timestamp() < t1 LOOP
        INSERT INTO twin VALUES (edge, gen_snowflake(), gen_xid12());
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;
