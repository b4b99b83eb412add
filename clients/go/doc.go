// Package idgen is pg_idgen's Go client: the writer registry (Registry, with Snowflake and
// xid12 generators bound to its grants), a pgx v5 codec for the xid12 type (binary, 12 bytes on
// the wire, and text), rapkey's check character and Snowflake decoding, and the offline edge
// store over database/sql. rs/xid's xid.ID is the id type: this package adds none.
//
// The rules are the project's contract (docs/formats.md) and are pinned by the shared vectors
// in tests/vectors, which this package's tests run.
package idgen
