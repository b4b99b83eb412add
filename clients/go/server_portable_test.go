package idgen

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rs/xid"
)

// TestServerPortableEdition: the registry on the portable edition. portable/dist's plain script
// is installed with psql into database go_portable, schema idgen, by its owner, a role with no
// other rights (portable/README.md). The Registry finds it by the edition rule; 1,000 ids of each
// kind through its grants, each greater than the last, all distinct, each inside a window that
// edition's registry recorded for this writer. xid.ID binds and reads through pgx against the
// edition's xid12 (a domain over text): its xid12_time equals ID.Time(), its ORDER BY equals
// xid.ID.Compare's.
func TestServerPortableEdition(t *testing.T) {
	ctx := context.Background()
	host, port := server(t)
	const db, owner, writer = "go_portable", "go_portable_owner", "go-portable"
	admin := connect(t, "postgres")
	for _, q := range []string{"DROP DATABASE IF EXISTS " + db + " WITH (FORCE)", "DROP ROLE IF EXISTS " + owner,
		"CREATE ROLE " + owner + " LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB", "CREATE DATABASE " + db + " OWNER " + owner} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)")
		admin.Exec(ctx, "DROP ROLE IF EXISTS "+owner)
	})

	// The plain script, as the README has a database's owner run it (a psql script: \if, \gset).
	dist := filepath.Join("..", "..", "portable", "dist")
	if v := os.Getenv("PG_IDGEN_VECTORS"); v != "" {
		dist = filepath.Join(v, "..", "..", "portable", "dist")
	}
	scripts, _ := filepath.Glob(filepath.Join(dist, "pg_idgen_portable--*.sql"))
	var script string
	for _, s := range scripts {
		if strings.Count(filepath.Base(s), "--") == 1 {
			script = s
		}
	}
	if script == "" {
		t.Fatalf("no portable install script in %s", dist)
	}
	psql := "psql"
	if bin := os.Getenv("PG_IDGEN_BINDIR"); bin != "" {
		psql = filepath.Join(bin, "psql")
	}
	out, err := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "schema=idgen",
		"-h", host, "-p", port, "-U", owner, "-d", db, "-f", script).CombinedOutput()
	if err != nil {
		t.Fatalf("psql -f %s: %v: %s", script, err, out)
	}

	ownerDSN := fmt.Sprintf("host=%s port=%s user=%s dbname=%s", host, port, owner, db)
	reg, err := Open(ctx, ownerDSN, Options{Writer: writer})
	if err != nil {
		t.Fatal(err)
	}
	sf, err := reg.Snowflake(ctx, GrantOptions{})
	if err != nil {
		t.Fatal(err)
	}
	xs, err := reg.Xid12(ctx, GrantOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	flakes, xids := make([]int64, 0, n), make([]xid.ID, 0, n)
	for i := 0; i < n; i++ {
		f, err := sf.NextID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		x, err := xs.New(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && (f <= flakes[i-1] || x.Compare(xids[i-1]) <= 0) {
			t.Fatalf("id %d: %d after %d, %s after %s", i, f, flakes[i-1], x, xids[i-1])
		}
		flakes, xids = append(flakes, f), append(xids, x)
	}
	if err := reg.Close(ctx); err != nil {
		t.Fatal(err)
	}

	c, err := pgx.Connect(ctx, ownerDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	e, err := FindEdition(ctx, c)
	if err != nil || e.Name != "portable" || e.Schema != "idgen" {
		t.Fatalf("the edition rule found %+v (%v), not the portable edition in schema idgen", e, err)
	}
	if err := RegisterXid12(ctx, c); err != nil {
		t.Fatal(err)
	}
	sfSpans, xSpans := grantSpans(t, c, "idgen.idgen_grants", writer, "snowflake"), grantSpans(t, c, "idgen.idgen_grants", writer, "xid12")
	for i := range flakes {
		if !inside(sfSpans, packSnowflake(flakes[i])) || !inside(xSpans, packXid(xids[i])) {
			t.Fatalf("id %d (%d, %s) outside the windows the portable registry recorded for %s", i, flakes[i], xids[i], writer)
		}
	}

	if _, err := c.Exec(ctx, "CREATE TEMP TABLE j (flake bigint, x idgen.xid12)"); err != nil {
		t.Fatal(err)
	}
	batch := &pgx.Batch{}
	for i := range flakes {
		batch.Queue("INSERT INTO j VALUES ($1, $2)", flakes[i], xids[i])
	}
	if err := c.SendBatch(ctx, batch).Close(); err != nil {
		t.Fatal(err)
	}
	var distinctF, distinctX int
	if err := c.QueryRow(ctx, "SELECT count(DISTINCT flake), count(DISTINCT x) FROM j").Scan(&distinctF, &distinctX); err != nil {
		t.Fatal(err)
	}
	if distinctF != n || distinctX != n {
		t.Fatalf("distinct: %d Snowflake, %d xid12 of %d", distinctF, distinctX, n)
	}
	sorted := append([]xid.ID(nil), xids...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Compare(sorted[j]) < 0 })
	rows, err := c.Query(ctx, "SELECT x, extract(epoch FROM idgen.xid12_time(x))::bigint FROM j ORDER BY x")
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var x xid.ID
		var unix int64
		if err := rows.Scan(&x, &unix); err != nil {
			t.Fatal(err)
		}
		if x != sorted[i] || unix != x.Time().Unix() {
			t.Fatalf("row %d of ORDER BY x: %s at %d, expected %s at %d", i, x, unix, sorted[i], sorted[i].Time().Unix())
		}
		i++
	}
	if err := rows.Err(); err != nil || i != n {
		t.Fatalf("read %d of %d rows (%v)", i, n, err)
	}
	t.Logf("portable edition (schema %s): %d Snowflake and %d xid12 ids through grants, inside %s's windows, "+
		"read back in the server's order", e.Schema, n, n, writer)
}
