-- The central node: one table merging every edge's rows, a unique index on each id column.
CREATE EXTENSION pg_idgen;

CREATE TABLE events (
    edge int NOT NULL,
    client int NOT NULL,
    x xid12 NOT NULL PRIMARY KEY,
    s bigint NOT NULL UNIQUE,
    r rapkey NOT NULL UNIQUE
);

-- The twins' rows, without unique constraints: their collisions are what is looked at.
CREATE TABLE twin (
    edge int NOT NULL,
    s bigint NOT NULL,
    x xid12 NOT NULL
);
