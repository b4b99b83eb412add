-- A table written by several clients at once when the server is stopped with -m immediate
-- (scripts/reliability.sh). Each client numbers its rows 1, 2, 3, ... (seq).
CREATE EXTENSION pg_idgen;
CREATE EXTENSION amcheck;
CREATE TABLE crash (
    client int NOT NULL,
    seq int NOT NULL,
    x xid12 NOT NULL UNIQUE,
    s bigint NOT NULL UNIQUE,
    r rapkey NOT NULL UNIQUE,
    PRIMARY KEY (client, seq)
);
