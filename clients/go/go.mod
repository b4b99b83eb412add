module github.com/pg-idgen/pg_idgen/clients/go

go 1.23

require (
	github.com/jackc/pgx/v5 v5.9.2
	github.com/rs/xid v1.4.0
)

require (
	github.com/google/uuid v1.3.0 // test only: the uuid.New() comparison
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20231201235250-de7065d80cb1 // indirect
	github.com/jackc/puddle/v2 v2.2.2 // indirect
	github.com/lib/pq v1.10.7 // test only: database/sql interop
	github.com/mattn/go-sqlite3 v1.14.16 // test only: the edge store's SQLite driver
	golang.org/x/sync v0.10.0 // indirect
	golang.org/x/text v0.21.0 // indirect
)
