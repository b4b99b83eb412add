package idgen

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/lib/pq" // Debian's golang-github-lib-pq-dev
	"github.com/rs/xid"
)

// TestServerPgBouncer: five Registries share a PgBouncer in transaction mode with two server
// connections; their grants renew through it (any session state or named statement would
// show), no advisory lock is held, every id is inside its writer's windows, Close releases.
func TestServerPgBouncer(t *testing.T) {
	ctx := context.Background()
	host, port := server(t)
	db := freshDB(t, "go_registry_bouncer")
	bouncer, err := exec.LookPath("pgbouncer")
	if err != nil {
		bouncer = "/usr/sbin/pgbouncer"
	}
	work, err := os.MkdirTemp("", "pg_idgen_go_bouncer_")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	_ = os.Chmod(work, 0o777)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bport := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ini := fmt.Sprintf(`[databases]
%s = host=%s port=%s dbname=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s/users.txt
pool_mode = transaction
default_pool_size = 2
max_client_conn = 100
ignore_startup_parameters = statement_timeout
logfile = %s/pgbouncer.log
pidfile = %s/pgbouncer.pid
`, db, host, port, db, bport, work, work, work)
	for name, text := range map[string]string{"users.txt": `"postgres" ""` + "\n", "pgbouncer.ini": ini} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{bouncer, filepath.Join(work, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// runuser forks pgbouncer and waits for it: a SIGKILL to runuser alone would leave
	// pgbouncer running (holding its port, and whatever descriptors it inherited, such as the
	// test scripts' lock). SIGTERM: runuser passes it on to pgbouncer and exits after it.
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	bdsn := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=%s sslmode=disable", bport, db)
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if c, err := pgx.Connect(ctx, bdsn); err == nil {
			c.Close(ctx)
			break
		}
		if time.Since(start) > 60*time.Second {
			log, _ := os.ReadFile(filepath.Join(work, "pgbouncer.log"))
			t.Fatalf("pgbouncer did not accept connections in 60 s: %s", log)
		}
	}
	c := connect(t, db)
	type pair struct {
		sf *GrantSnowflake
		xs *GrantXid12
	}
	var regs []*Registry
	var gens []pair
	for k := 0; k < 5; k++ {
		reg, err := Open(ctx, bdsn, Options{Writer: fmt.Sprintf("go-bounced-%d", k)})
		if err != nil {
			t.Fatal(err)
		}
		regs = append(regs, reg)
		sf, err := reg.Snowflake(ctx, GrantOptions{Lease: "2 seconds"})
		if err != nil {
			t.Fatal(err)
		}
		xs, err := reg.Xid12(ctx, GrantOptions{Lease: "2 seconds"})
		if err != nil {
			t.Fatal(err)
		}
		gens = append(gens, pair{sf, xs})
	}
	sfs := make([][]int64, 5)
	xss := make([][]xid.ID, 5)
	start := time.Now()
	for {
		var renewed int
		if err := c.QueryRow(ctx, `SELECT count(*) FROM idgen_grants WHERE writer LIKE 'go-bounced-%' AND renewed_at IS NOT NULL`).Scan(&renewed); err != nil {
			t.Fatal(err)
		}
		if renewed >= 10 && time.Since(start) > 500*time.Millisecond {
			break
		}
		if time.Since(start) > 120*time.Second {
			t.Fatal("no renewals through pgbouncer in 120 s")
		}
		for k, g := range gens {
			id, err := g.sf.NextID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			x, err := g.xs.New(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sfs[k], xss[k] = append(sfs[k], id), append(xss[k], x)
		}
		time.Sleep(5 * time.Millisecond)
	}
	var advisory int
	_ = c.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'`).Scan(&advisory)
	if advisory != 0 {
		t.Errorf("%d advisory locks held", advisory)
	}
	for _, r := range regs {
		_ = r.Close(ctx)
	}
	for k := range gens {
		w := fmt.Sprintf("go-bounced-%d", k)
		sfSpans, xSpans := writerSpans(t, c, w, "snowflake"), writerSpans(t, c, w, "xid12")
		for _, id := range sfs[k] {
			if !inside(sfSpans, packSnowflake(id)) {
				t.Fatalf("%s's snowflake %d is outside its windows", w, id)
			}
		}
		for _, id := range xss[k] {
			if !inside(xSpans, packXid(id)) {
				t.Fatalf("%s's xid12 %s is outside its windows", w, id)
			}
		}
	}
	var allReleased bool
	_ = c.QueryRow(ctx, `SELECT bool_and(released_at IS NOT NULL) FROM idgen_grants WHERE writer LIKE 'go-bounced-%'`).Scan(&allReleased)
	if !allReleased {
		t.Error("grants not released through pgbouncer")
	}
	t.Logf("through PgBouncer (transaction mode, 2 server connections): 5 registries, %d ids each kind, renewed", len(sfs[0])*5)
}

// TestServerXidInterop: rs/xid's xid.ID through pgx (the codec, binary) and database/sql with
// lib/pq (text), both ways: ids bound as parameters and scanned, xid12_time equal to ID.Time(),
// the server's ORDER BY equal to xid.ID.Compare order.
func TestServerXidInterop(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t, "go_xid_interop")
	cfg, err := pgxpool.ParseConfig(dsn(t, db))
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = RegisterXid12
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	host, port := server(t)
	sqldb, err := sql.Open("postgres", fmt.Sprintf("host=%s port=%s user=postgres dbname=%s sslmode=disable", host, port, db))
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	if _, err := pool.Exec(ctx, `CREATE TABLE orders (id xid12 PRIMARY KEY, n int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	want := map[int]xid.ID{}
	for i := 0; i < 1000; i++ {
		id := xid.New()
		want[i] = id
		if _, err := pool.Exec(ctx, `INSERT INTO orders VALUES ($1, $2)`, id, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1000; i < 2000; i++ {
		id := xid.New()
		want[i] = id
		if _, err := sqldb.Exec(`INSERT INTO orders VALUES ($1, $2)`, id, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `INSERT INTO orders SELECT gen_xid12(), g FROM generate_series(2000, 2999) g`); err != nil {
		t.Fatal(err)
	}
	// pgx: binary (the registered codec), every row, with xid12_time.
	rows, err := pool.Query(ctx, `SELECT id, n, xid12_time(id) FROM orders ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	if f := rows.FieldDescriptions()[0]; f.Format != 1 {
		t.Fatalf("xid12 read in format %d, not binary", f.Format)
	}
	var ordered []xid.ID
	byN := map[int]xid.ID{}
	for rows.Next() {
		var id xid.ID
		var n int
		var ts time.Time
		if err := rows.Scan(&id, &n, &ts); err != nil {
			t.Fatal(err)
		}
		if !ts.Equal(id.Time()) {
			t.Fatalf("%s: xid12_time %v, ID.Time() %v", id, ts, id.Time())
		}
		if w, ok := want[n]; ok && w != id {
			t.Fatalf("row %d: read %s, bound %s", n, id, w)
		}
		ordered = append(ordered, id)
		byN[n] = id
	}
	if rows.Err() != nil || len(ordered) != 3000 {
		t.Fatalf("%d rows, %v", len(ordered), rows.Err())
	}
	sorted := append([]xid.ID(nil), ordered...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Compare(sorted[j]) < 0 })
	for i := range sorted {
		if sorted[i] != ordered[i] {
			t.Fatalf("ORDER BY id differs from xid.ID.Compare at %d", i)
		}
	}
	// lib/pq: text, every row; ids bound as parameters find their rows.
	srows, err := sqldb.Query(`SELECT id, n FROM orders`)
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for srows.Next() {
		var id xid.ID
		var n int
		if err := srows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		if byN[n] != id {
			t.Fatalf("lib/pq reads %s for row %d, pgx %s", id, n, byN[n])
		}
		count++
	}
	if count != 3000 {
		t.Fatalf("lib/pq read %d rows", count)
	}
	for _, n := range []int{5, 1500, 2500} {
		var got int
		if err := sqldb.QueryRow(`SELECT n FROM orders WHERE id = $1`, byN[n]).Scan(&got); err != nil || got != n {
			t.Fatalf("lib/pq: id %s finds %d (%v)", byN[n], got, err)
		}
		if err := pool.QueryRow(ctx, `SELECT n FROM orders WHERE id = $1`, byN[n]).Scan(&got); err != nil || got != n {
			t.Fatalf("pgx: id %s finds %d (%v)", byN[n], got, err)
		}
	}
	// Arrays through the codec; the zero id binds as NULL (rs/xid's rule).
	var arr []xid.ID
	if err := pool.QueryRow(ctx, `SELECT array_agg(id ORDER BY id) FROM orders WHERE n < 3`).Scan(&arr); err != nil || len(arr) != 3 {
		t.Fatalf("array: %v %v", arr, err)
	}
	var isNull bool
	if err := pool.QueryRow(ctx, `SELECT $1::xid12 IS NULL`, xid.NilID()).Scan(&isNull); err != nil || !isNull {
		t.Fatalf("the zero id binds as %v (%v)", isNull, err)
	}
	t.Logf("rs/xid through pgx (binary) and lib/pq (text): 3,000 ids, time and order equal")
}
