package idgen

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid" // Debian's golang-github-google-uuid-dev
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/xid"
)

// perOp is the best of 5 runs of n calls of f, per call: the least disturbed by the machine's
// other work, calibrated in this run (the ratios compare runs of the same process).
func perOp(n int, f func()) time.Duration {
	best := time.Duration(1<<63 - 1)
	for r := 0; r < 5; r++ {
		began := time.Now()
		for i := 0; i < n; i++ {
			f()
		}
		best = min(best, time.Since(began)/time.Duration(n))
	}
	return best
}

// TestServerMeasure prints the measurements of clients/go/README.md (no pass/fail on speed).
func TestServerMeasure(t *testing.T) {
	ctx := context.Background()
	db := freshDB(t, "go_measure")
	reg, err := Open(ctx, dsn(t, db), Options{Writer: "go-measure"})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close(ctx)
	sf, err := reg.Snowflake(ctx, GrantOptions{})
	if err != nil {
		t.Fatal(err)
	}
	xs, err := reg.Xid12(ctx, GrantOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200_000
	var sink any
	plainX := perOp(n, func() { sink = xid.New() })
	boundX := perOp(n, func() { sink, _ = xs.New(ctx) })
	u := perOp(n, func() { sink = uuid.New() })
	// Snowflake: the same state machine unbound from a registry, with its own whole window.
	plain := NewSnowflakeGrantState(DefaultSnowflakeEpochMs, 5000)
	_ = plain.Bind(1, 0, maxSnowflakeMs)
	plainSf := perOp(n, func() {
		for {
			if st, _ := plain.Step(time.Now().UnixMilli()); st == StepID {
				sink = plain.ID
				return
			}
		}
	})
	boundSf := perOp(n, func() { sink, _ = sf.NextID(ctx) })
	_ = sink
	t.Logf("per id: xid12 bound %v, rs/xid xid.New() %v: %.2fx (target <= 1.1x); uuid.New() %v: bound xid12 %.2fx of it",
		boundX, plainX, float64(boundX)/float64(plainX), u, float64(boundX)/float64(u))
	t.Logf("per id: snowflake bound %v, the unbound state machine %v: %.2fx (target <= 1.1x)",
		boundSf, plainSf, float64(boundSf)/float64(plainSf))

	// Acquire + release round trip (on the socket).
	rt := perOp(20, func() {
		g, err := reg.Snowflake(ctx, GrantOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Release(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("acquire + release round trip: %v", rt)

	// Decode 1M ids from a result set, binary (the codec) against text.
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
	if _, err := pool.Exec(ctx, `CREATE TABLE ids AS SELECT gen_xid12() AS id FROM generate_series(1, 1000000)`); err != nil {
		t.Fatal(err)
	}
	read := func(format int16) time.Duration {
		best := time.Duration(1<<63 - 1)
		for r := 0; r < 3; r++ {
			began := time.Now()
			rows, err := pool.Query(ctx, `SELECT id FROM ids`, pgx.QueryResultFormats{format})
			if err != nil {
				t.Fatal(err)
			}
			count := 0
			var id xid.ID
			for rows.Next() {
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				count++
			}
			if rows.Err() != nil || count != 1_000_000 {
				t.Fatalf("%d rows, %v", count, rows.Err())
			}
			best = min(best, time.Since(began))
		}
		return best
	}
	bin, text := read(pgx.BinaryFormatCode), read(pgx.TextFormatCode)
	t.Logf("1M ids from a result set into xid.ID: binary %v, text %v: text takes %.2fx binary's time", bin, text, float64(text)/float64(bin))
}
