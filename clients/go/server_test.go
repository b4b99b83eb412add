package idgen

// The tests against a server (scripts/test_go.sh with PG_IDGEN_HOST and PG_IDGEN_PORT of a
// cluster with pg_idgen installed and preloaded); skipped without them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/rs/xid"
)

func server(t *testing.T) (host, port string) {
	host, port = os.Getenv("PG_IDGEN_HOST"), os.Getenv("PG_IDGEN_PORT")
	if host == "" || port == "" {
		t.Skip("PG_IDGEN_HOST and PG_IDGEN_PORT not set: no server")
	}
	return host, port
}

func dsn(t *testing.T, db string) string {
	host, port := server(t)
	return fmt.Sprintf("host=%s port=%s user=postgres dbname=%s", host, port, db)
}

// freshDB makes the database name anew, with the extension.
func freshDB(t *testing.T, name string) string {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn(t, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, q := range []string{"DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", "CREATE DATABASE " + name} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	c := connect(t, name)
	if _, err := c.Exec(ctx, "CREATE EXTENSION pg_idgen"); err != nil {
		t.Fatal(err)
	}
	return name
}

func connect(t *testing.T, db string) *pgx.Conn {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn(t, db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}

// span is one grant's window packed as the registry's exclusion constraint packs it
// (docs/formats.md §8): Snowflake 2^60 + slot·2^41 + t, xid12 slot·2^32 + t.
type span struct{ lo, hi int64 }

func writerSpans(t *testing.T, c *pgx.Conn, writer, kind string) []span {
	return grantSpans(t, c, "idgen_grants", writer, kind)
}

// grantSpans reads the spans of the view grants (qualified where the edition lives off the path).
func grantSpans(t *testing.T, c *pgx.Conn, grants, writer, kind string) []span {
	rows, err := c.Query(context.Background(),
		`SELECT lower(span), upper(span) FROM `+grants+` WHERE writer = $1 AND kind = $2`, writer, kind)
	if err != nil {
		t.Fatal(err)
	}
	spans, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (span, error) {
		var s span
		return s, r.Scan(&s.lo, &s.hi)
	})
	if err != nil || len(spans) == 0 {
		t.Fatalf("%s has no %s grants (%v)", writer, kind, err)
	}
	return spans
}

func packSnowflake(id int64) int64 { return 1<<60 + (id>>12&1023)<<41 + id>>22 }
func packXid(id xid.ID) int64 {
	m := id.Machine()
	return (int64(m[0])<<16|int64(m[1])<<8|int64(m[2]))<<32 + id.Time().Unix()
}

func inside(spans []span, p int64) bool {
	for _, s := range spans {
		if p >= s.lo && p < s.hi {
			return true
		}
	}
	return false
}

type made struct {
	mu  sync.Mutex
	sf  map[string][]int64
	xs  map[string][]xid.ID
	bad atomic.Value
}

// TestServerRegistryConcurrent: 8 goroutines x 2 writers x 50,000 ids of each kind through
// grants of 2-second leases (renewed meanwhile): all distinct across both writers, each
// writer's ids inside its own windows, each goroutine's increasing; Close releases all.
func TestServerRegistryConcurrent(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t, "go_registry")
	c := connect(t, db)
	const goroutines, perGoroutine = 8, 50_000
	writers := []string{"go-a", "go-b"}
	m := &made{sf: map[string][]int64{}, xs: map[string][]xid.ID{}}
	var regs []*Registry
	var wg sync.WaitGroup
	for _, w := range writers {
		reg, err := Open(ctx, dsn(t, db), Options{Writer: w})
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
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func(w string, reg *Registry) {
				defer wg.Done()
				sfs := make([]int64, 0, perGoroutine)
				xss := make([]xid.ID, 0, perGoroutine)
				for i := 0; i < perGoroutine; i++ {
					id, err := sf.NextID(ctx)
					if err != nil {
						m.bad.Store(err)
						return
					}
					if len(sfs) > 0 && id <= sfs[len(sfs)-1] {
						m.bad.Store(fmt.Errorf("snowflake %d after %d", id, sfs[len(sfs)-1]))
					}
					sfs = append(sfs, id)
					x, err := xs.New(ctx)
					if err != nil {
						m.bad.Store(err)
						return
					}
					if len(xss) > 0 && x.Compare(xss[len(xss)-1]) <= 0 {
						m.bad.Store(fmt.Errorf("xid12 %s after %s", x, xss[len(xss)-1]))
					}
					xss = append(xss, x)
				}
				// Then slowly on until the writer's grants were renewed (2 s leases renew each second).
				deadline := time.Now().Add(60 * time.Second)
				for time.Now().Before(deadline) {
					var renewed int
					if err := reg.db.QueryRow(ctx, `SELECT count(*) FROM idgen_grants WHERE writer = $1 AND renewed_at IS NOT NULL`, w).Scan(&renewed); err != nil {
						m.bad.Store(err)
						return
					}
					if renewed >= 2 {
						break
					}
					id, err1 := sf.NextID(ctx)
					x, err2 := xs.New(ctx)
					if err := errors.Join(err1, err2); err != nil {
						m.bad.Store(err)
						return
					}
					sfs, xss = append(sfs, id), append(xss, x)
					time.Sleep(20 * time.Millisecond)
				}
				m.mu.Lock()
				m.sf[w] = append(m.sf[w], sfs...)
				m.xs[w] = append(m.xs[w], xss...)
				m.mu.Unlock()
			}(w, reg)
		}
	}
	wg.Wait()
	if err, _ := m.bad.Load().(error); err != nil {
		t.Fatal(err)
	}
	for _, r := range regs {
		if err := r.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	seenSf := map[int64]string{}
	seenX := map[xid.ID]string{}
	for _, w := range writers {
		var renewed int
		_ = c.QueryRow(ctx, `SELECT count(*) FROM idgen_grants WHERE writer = $1 AND renewed_at IS NOT NULL`, w).Scan(&renewed)
		if renewed < 2 {
			t.Errorf("%s's grants were not renewed", w)
		}
		sfSpans, xSpans := writerSpans(t, c, w, "snowflake"), writerSpans(t, c, w, "xid12")
		if len(m.sf[w]) < goroutines*perGoroutine || len(m.xs[w]) < goroutines*perGoroutine {
			t.Fatalf("%s made %d and %d ids", w, len(m.sf[w]), len(m.xs[w]))
		}
		for _, id := range m.sf[w] {
			if other, dup := seenSf[id]; dup {
				t.Fatalf("snowflake %d made by %s and %s", id, other, w)
			}
			seenSf[id] = w
			if !inside(sfSpans, packSnowflake(id)) {
				t.Fatalf("%s's snowflake %d is outside its windows", w, id)
			}
		}
		for _, id := range m.xs[w] {
			if other, dup := seenX[id]; dup {
				t.Fatalf("xid12 %s made by %s and %s", id, other, w)
			}
			seenX[id] = w
			if !inside(xSpans, packXid(id)) {
				t.Fatalf("%s's xid12 %s is outside its windows", w, id)
			}
		}
	}
	var open int
	_ = c.QueryRow(ctx, `SELECT count(*) FROM idgen_grants WHERE writer LIKE 'go-%' AND released_at IS NULL AND NOT reserved`).Scan(&open)
	if open != 0 {
		t.Errorf("%d grants not released by Close", open)
	}
	t.Logf("%d snowflake and %d xid12 ids from 2 writers x %d goroutines, all distinct, each inside its writer's windows",
		len(seenSf), len(seenX), goroutines)
}

// proxy forwards TCP to the server's socket until cut, then swallows everything (a link that
// stops answering, not one that refuses).
type proxy struct {
	ln  net.Listener
	cut atomic.Bool
}

func startProxy(t *testing.T) *proxy {
	host, port := server(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := net.Dial("unix", filepath.Join(host, ".s.PGSQL."+port))
				if err != nil {
					return
				}
				defer out.Close()
				pipe := func(dst, src net.Conn) {
					buf := make([]byte, 32<<10)
					for {
						n, err := src.Read(buf)
						if err != nil {
							return
						}
						if !p.cut.Load() {
							if _, err := dst.Write(buf[:n]); err != nil {
								return
							}
						}
					}
				}
				go pipe(out, in)
				pipe(in, out)
			}()
		}
	}()
	return p
}

func (p *proxy) dsn(db string) string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=%s sslmode=disable", p.ln.Addr().(*net.TCPAddr).Port, db)
}

// TestServerRenewalCut: the link to the registry stops answering; ids go on inside the window
// and then fail with RegistryUnavailable, no call waiting past the window's end by more than
// RenewWait (1 s) plus scheduling; no id at or past the window's end; Close is bounded too.
func TestServerRenewalCut(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t, "go_registry_cut")
	p := startProxy(t)
	// Timeout (5 s) well past RenewWait (1 s): only RenewWait bounds an id at the window's end.
	reg, err := Open(ctx, p.dsn(db), Options{Writer: "go-cut", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sf, err := reg.Snowflake(ctx, GrantOptions{Lease: "3 seconds"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sf.NextID(ctx); err != nil {
		t.Fatal(err)
	}
	p.cut.Store(true)
	const slack = 750 * time.Millisecond
	var last int64
	var failed error
	var longest time.Duration
	for stop := time.Now().Add(30 * time.Second); time.Now().Before(stop); {
		began := time.Now()
		id, err := sf.NextID(ctx)
		took := time.Since(began)
		longest = max(longest, took)
		if err != nil {
			failed = err
			hi := sf.Grant()
			if hi != nil && time.Now().After(time.UnixMicro(hi.HiUs).Add(time.Second+slack)) {
				t.Errorf("failed at %s, more than 1 s after the window's end %s", time.Now().UTC().Format(time.RFC3339Nano), time.UnixMicro(hi.HiUs).UTC())
			}
			break
		}
		g := sf.Grant()
		if d, _ := DecodeSnowflake(id, g.EpochMs); d.MsSinceEpoch >= g.Hi {
			t.Fatalf("id %d at or past the window's end", id)
		}
		last = id
		time.Sleep(2 * time.Millisecond)
	}
	var un *RegistryUnavailable
	if !errors.As(failed, &un) {
		t.Fatalf("after the cut: %v (last id %d), want RegistryUnavailable", failed, last)
	}
	if longest > time.Second+slack {
		t.Errorf("a call took %s, past the bound of 1 s", longest)
	}
	began := time.Now()
	_ = reg.Close(ctx)
	if took := time.Since(began); took > 5*time.Second+slack {
		t.Errorf("Close took %s with the link cut (Timeout 5 s)", took)
	}
	t.Logf("cut link: ids until the window's end, then %q; the longest call took %s", failed, longest.Round(time.Millisecond))
}

// TestServerFenced: a change of origin (faked as the Python client's test does) fences new
// Snowflake grants: RegistryFenced carrying the fence's end, which the server computes.
func TestServerFenced(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t, "go_registry_fenced")
	c := connect(t, db)
	reg, err := Open(ctx, dsn(t, db), Options{Writer: "go-after"})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close(ctx)
	var seenAt time.Time
	if err := c.QueryRow(ctx, `
		INSERT INTO idgen_registry_origin (system_identifier, timeline, seen_at, fenced, reason)
		SELECT o.system_identifier, o.timeline, clock_timestamp(), true, 'a failover faked by the Go test'
		  FROM idgen_registry_origin o ORDER BY o.seen_at DESC LIMIT 1
		RETURNING seen_at`).Scan(&seenAt); err != nil {
		t.Fatal(err)
	}
	var fenceEnds time.Time
	if err := c.QueryRow(ctx, `SELECT $1::timestamptz + idgen_registry_seconds(idgen_registry_fence_lease('snowflake', int4range(0, 768))) + idgen_registry_fence_margin()`, seenAt).Scan(&fenceEnds); err != nil {
		t.Fatal(err)
	}
	_, err = reg.Snowflake(ctx, GrantOptions{})
	var fenced *RegistryFenced
	if !errors.As(err, &fenced) {
		t.Fatalf("%v (%T), want RegistryFenced", err, err)
	}
	var lost *GrantLost
	if errors.As(err, &lost) || fenced.SQLState != "IG001" {
		t.Fatalf("%v", err)
	}
	if !fenced.Until.Equal(fenceEnds) || !fenced.Until.After(time.Now()) {
		t.Fatalf("fenced until %v, the fence ends %v", fenced.Until, fenceEnds)
	}
	if !bytes.Contains([]byte(err.Error()), []byte("a failover faked by the Go test")) {
		t.Errorf("the message has no DETAIL: %s", err)
	}
	t.Logf("RegistryFenced until %s", fenced.Until.UTC().Format(time.RFC3339Nano))
}
