module github.com/pg-idgen/pg_idgen/clients/go

go 1.25.0

require (
	github.com/jackc/pgx/v5 v5.9.2
	github.com/rs/xid v1.4.0
)

// Tests only: database/sql interop, the edge store's SQLite driver, the uuid comparison.
require (
	github.com/google/uuid v1.3.0
	github.com/lib/pq v1.10.7
	github.com/mattn/go-sqlite3 v1.14.16
)

require (
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	golang.org/x/sync v0.17.0 // indirect
	golang.org/x/text v0.29.0 // indirect
)
