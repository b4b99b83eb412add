// The Go recipe of pg_idgen's README ("From your application"), run against a real server by
// scripts/test_recipes.sh: rs/xid's xid.ID through pgx and through database/sql (pgx's stdlib
// driver). Connection settings come from the libpq environment (PGHOST, PGPORT, PGUSER,
// PGDATABASE). Exits non-zero when a check fails.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"sort"

	"github.com/jackc/pgx/v4"
	_ "github.com/jackc/pgx/v4/stdlib"
	"github.com/rs/xid"
)

func check(ok bool, format string, args ...interface{}) {
	if !ok {
		fmt.Fprintf(os.Stderr, "FAILED: "+format+"\n", args...)
		os.Exit(1)
	}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAILED:", err)
		os.Exit(1)
	}
}

// --- recipe: begin ---
// xid.ID binds and scans as it is, with pgx and with database/sql: its Value gives the text,
// its Scan reads it.
func insertOrder(ctx context.Context, conn *pgx.Conn, n int) (xid.ID, error) {
	id := xid.New()
	_, err := conn.Exec(ctx, `INSERT INTO orders (id, n) VALUES ($1, $2)`, id, n)
	return id, err
}

func orderN(ctx context.Context, conn *pgx.Conn, id xid.ID) (n int, err error) {
	err = conn.QueryRow(ctx, `SELECT n FROM orders WHERE id = $1`, id).Scan(&n)
	return n, err
}

func insertOrderSQL(db *sql.DB, id xid.ID, n int) error {
	_, err := db.Exec(`INSERT INTO orders (id, n) VALUES ($1, $2)`, id, n)
	return err
}

// Several ids: bind their text as text[] and cast it.
func countOrders(ctx context.Context, conn *pgx.Conn, ids []xid.ID) (n int, err error) {
	texts := make([]string, len(ids))
	for i, id := range ids {
		texts[i] = id.String()
	}
	err = conn.QueryRow(ctx, `SELECT count(*) FROM orders WHERE id = ANY($1::text[]::xid12[])`, texts).Scan(&n)
	return n, err
}

// Keyset pagination. The first page has no bound: do not start after xid.NilID(), whose
// Value() is NULL (id > NULL matches nothing). Or start at xid12_min('1970-01-01').
func firstPage(ctx context.Context, conn *pgx.Conn, n int) ([]xid.ID, error) {
	return page(conn.Query(ctx, `SELECT id FROM orders ORDER BY id LIMIT $1`, n))
}

func nextPage(ctx context.Context, conn *pgx.Conn, after xid.ID, n int) ([]xid.ID, error) {
	return page(conn.Query(ctx, `SELECT id FROM orders WHERE id > $1 ORDER BY id LIMIT $2`, after, n))
}

func firstPageFromEpoch(ctx context.Context, conn *pgx.Conn, n int) ([]xid.ID, error) {
	return page(conn.Query(ctx,
		`SELECT id FROM orders WHERE id >= xid12_min('1970-01-01 00:00:00+00') ORDER BY id LIMIT $1`, n))
}

func page(rows pgx.Rows, err error) ([]xid.ID, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []xid.ID
	for rows.Next() {
		var id xid.ID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// --- recipe: end ---

func main() {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "")
	must(err)
	defer conn.Close(ctx)

	_, err = conn.Exec(ctx, `CREATE TEMP TABLE orders (id xid12 PRIMARY KEY, n int NOT NULL)`)
	must(err)

	id, err := insertOrder(ctx, conn, 1)
	must(err)
	n, err := orderN(ctx, conn, id)
	must(err)
	check(n == 1, "orderN(%s) = %d, want 1", id, n)
	var got xid.ID
	must(conn.QueryRow(ctx, `SELECT id FROM orders WHERE n = 1`).Scan(&got))
	check(got == id, "pgx round trip: %s != %s", got, id)
	var stored []byte
	must(conn.QueryRow(ctx, `SELECT id::bytea FROM orders WHERE id = $1`, id).Scan(&stored))
	check(bytes.Equal(stored, id.Bytes()), "the server stores %x, the id is %x", stored, id.Bytes())

	// Byte-exact both ways on 300 arbitrary 12-byte values, and rs/xid's documented example.
	rows, err := conn.Query(ctx, `
		SELECT substr(decode(md5(g::text) || md5(g::text || 'x'), 'hex'), 1, 12)
		  FROM generate_series(1, 300) g`)
	must(err)
	var samples [][]byte
	for rows.Next() {
		var b []byte
		must(rows.Scan(&b))
		samples = append(samples, b)
	}
	must(rows.Err())
	for _, b := range samples {
		want, err := xid.FromBytes(b)
		must(err)
		var viaServer xid.ID
		var back []byte
		must(conn.QueryRow(ctx, `SELECT $1::bytea::xid12, $2::xid12::bytea`, b, want).Scan(&viaServer, &back))
		check(viaServer == want, "bytes %x read back as %s, want %s", b, viaServer, want)
		check(bytes.Equal(back, b), "id %s stored as %x, want %x", want, back, b)
	}
	example, err := xid.FromString("9m4e2mr0ui3e8a215n4g")
	must(err)
	var exampleHex string
	must(conn.QueryRow(ctx, `SELECT encode($1::xid12::bytea, 'hex')`, example).Scan(&exampleHex))
	check(exampleHex == "4d88e15b60f486e428412dc9", "rs/xid's example id is %s in the server", exampleHex)
	fmt.Printf("byte-exact round trip: %d ids\n", len(samples)+2)

	// Ids made in Go (200, this second) and by the server (800, of 800 different minutes).
	want := []xid.ID{id}
	for i := 1; i <= 200; i++ {
		goID := xid.New()
		_, err = conn.Exec(ctx, `INSERT INTO orders (id, n) VALUES ($1, $2)`, goID, 1000+i)
		must(err)
		want = append(want, goID)
	}
	rows, err = conn.Query(ctx, `
		INSERT INTO orders (id, n)
		SELECT gen_xid12(timestamptz '2026-01-01' + g * interval '1 minute'), g FROM generate_series(2, 801) g
		RETURNING id`)
	must(err)
	for rows.Next() {
		var serverID xid.ID
		must(rows.Scan(&serverID))
		want = append(want, serverID)
	}
	must(rows.Err())
	sort.Slice(want, func(i, j int) bool { return want[i].Compare(want[j]) < 0 })

	count, err := countOrders(ctx, conn, append(want[:3:3], xid.New()))
	must(err)
	check(count == 3, "ANY($1::text[]::xid12[]) found %d rows, want 3", count)
	ids := []string{want[0].String(), want[1].String(), want[2].String()}

	// Pagination from the first page, in the server's order, which is xid.ID's Compare order.
	var paged []xid.ID
	p, err := firstPage(ctx, conn, 100)
	must(err)
	pages := 0
	for len(p) > 0 {
		pages++
		paged = append(paged, p...)
		p, err = nextPage(ctx, conn, p[len(p)-1], 100)
		must(err)
	}
	check(len(paged) == len(want), "pagination returned %d ids, want %d", len(paged), len(want))
	for i := range want {
		check(paged[i] == want[i], "page order differs at %d: %s, want %s", i, paged[i], want[i])
	}
	fmt.Printf("pagination (pgx): %d pages, %d ids, in xid.ID's order\n", pages, len(paged))

	// The zero-id trap: xid.NilID() binds as NULL, so a "first page" bound by it is empty.
	v, err := xid.NilID().Value()
	must(err)
	check(v == nil, "NilID().Value() is %v, expected NULL", v)
	trap, err := nextPage(ctx, conn, xid.NilID(), 100)
	must(err)
	check(len(trap) == 0, "a page after NilID() returned %d rows; the trap is gone?", len(trap))
	fromEpoch, err := firstPageFromEpoch(ctx, conn, 100)
	must(err)
	check(len(fromEpoch) == 100 && fromEpoch[0] == want[0], "the page from xid12_min('1970-01-01') is not the first page")
	fmt.Println("zero-id trap: a page after xid.NilID() is empty; no bound or xid12_min('1970-01-01') gives the first page")

	// The same through database/sql with pgx's stdlib driver.
	db, err := sql.Open("pgx", "")
	must(err)
	defer db.Close()
	db.SetMaxOpenConns(1) // one session: the temporary table below
	_, err = db.Exec(`CREATE TEMP TABLE orders (id xid12 PRIMARY KEY, n int NOT NULL)`)
	must(err)
	for i, w := range want {
		err = insertOrderSQL(db, w, i)
		must(err)
	}
	var cursor *xid.ID
	var sqlPaged []xid.ID
	for {
		var r *sql.Rows
		if cursor == nil {
			r, err = db.Query(`SELECT id FROM orders ORDER BY id LIMIT 100`)
		} else {
			r, err = db.Query(`SELECT id FROM orders WHERE id > $1 ORDER BY id LIMIT 100`, *cursor)
		}
		must(err)
		var last *xid.ID
		for r.Next() {
			var sid xid.ID
			must(r.Scan(&sid))
			sqlPaged = append(sqlPaged, sid)
			last = &sid
		}
		must(r.Err())
		r.Close()
		if last == nil {
			break
		}
		cursor = last
	}
	check(len(sqlPaged) == len(want), "database/sql pagination returned %d ids, want %d", len(sqlPaged), len(want))
	for i := range want {
		check(sqlPaged[i] == want[i], "database/sql page order differs at %d", i)
	}
	var sqlCount int
	must(db.QueryRow(`SELECT count(*) FROM orders WHERE id = ANY($1::text[]::xid12[])`, ids).Scan(&sqlCount))
	check(sqlCount == 3, "database/sql: ANY($1::text[]::xid12[]) found %d rows, want 3", sqlCount)
	var nilCount int
	must(db.QueryRow(`SELECT count(*) FROM orders WHERE id > $1`, xid.NilID()).Scan(&nilCount))
	check(nilCount == 0, "database/sql: id > NilID() matched %d rows; the trap is gone?", nilCount)
	// A NULL xid12 scans as xid.NilID() without an error: test IsNil() where NULL can occur.
	var fromNull xid.ID
	must(db.QueryRow(`SELECT NULL::xid12`).Scan(&fromNull))
	check(fromNull.IsNil(), "NULL scanned as %s", fromNull)
	fmt.Printf("database/sql (pgx stdlib): %d ids paged, arrays and NilID as with pgx\n", len(sqlPaged))

	fmt.Println("Go recipe: all checks passed")
}
