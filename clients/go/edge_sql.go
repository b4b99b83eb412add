package idgen

// EdgeTable is the SQLite table of an edge device (docs/formats.md §10), character for
// character the statement tests/vectors/edge_store.json holds, which the Python and Rust
// clients' EdgeStore run too: a file one client wrote, another reads.
const EdgeTable = `
CREATE TABLE IF NOT EXISTS pg_idgen_edge (
    kind text PRIMARY KEY CHECK (kind IN ('xid12', 'snowflake')),
    grant_id integer NOT NULL,
    token integer NOT NULL,
    slot integer NOT NULL,
    lo_us integer NOT NULL,  -- the window [lo, hi) in unix microseconds
    hi_us integer NOT NULL,
    epoch_ms integer,        -- the Snowflake epoch of the grant; NULL for xid12
    writer text NOT NULL,
    syncs integer NOT NULL DEFAULT 0,  -- the count the registry gave at the last report
    last_id,                 -- the high-water mark: the last id made (xid12 text, Snowflake int)
    last_id_us integer,      -- its id-time in unix microseconds
    cloned text,             -- set when the registry found this state on another device
    attempt integer          -- the number of the report being sent, kept until its reply arrives
)`

const edgeEnrol = `INSERT INTO pg_idgen_edge (kind, grant_id, token, slot, lo_us, hi_us, epoch_ms, writer) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
