package idgen

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options of a Registry; the zero value of each field is its default.
type Options struct {
	Writer    string           // this writer's name in the registry; default "<host name>:<pid>"
	Pool      string           // the registry pool grants come from; default "app"
	MaxWait   time.Duration    // how long an id waits for a window that starts after the clock; default 5 s
	Timeout   time.Duration    // one call to the registry, connecting included; also Close's bound; default 5 s
	RenewWait time.Duration    // how long an id waits at the window's end for the renewal; default 1 s
	Clock     func() time.Time // the writer's clock; default time.Now
}

func (o *Options) defaults() {
	if o.Writer == "" {
		host, _ := os.Hostname()
		o.Writer = host + ":" + strconv.Itoa(os.Getpid())
	}
	if o.Pool == "" {
		o.Pool = "app"
	}
	if o.MaxWait == 0 {
		o.MaxWait = 5 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.RenewWait == 0 {
		o.RenewWait = time.Second
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
}

// Registry is the writer registry of one database. Snowflake and Xid12 give generators bound
// to grants; Close releases them. Every call is one statement in pgx's QueryExecModeExec (the
// extended protocol's unnamed statement, sent in one round trip: nothing is prepared by name)
// and the registry keeps no session state, so a PgBouncer in transaction mode in between is fine.
type Registry struct {
	opts   Options
	db     *pgxpool.Pool
	own    bool
	mu     sync.Mutex
	sql    *statements
	gens   map[*grantGen]struct{}
	closed atomic.Bool
}

// Open opens a Registry over a pool of its own, from a connection string (libpq's forms).
func Open(ctx context.Context, connString string, opts Options) (*Registry, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	return OpenConfig(ctx, cfg, opts)
}

// OpenConfig opens a Registry over a pool of its own made from cfg, with the connect timeout,
// TCP keepalives (10 s), and the connect timeout and the server's statement_timeout from
// opts.Timeout unless cfg sets them. Close closes that pool.
func OpenConfig(ctx context.Context, cfg *pgxpool.Config, opts Options) (*Registry, error) {
	opts.defaults()
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = opts.Timeout
	}
	d := &net.Dialer{Timeout: cc.ConnectTimeout, KeepAlive: 10 * time.Second}
	cc.DialFunc = d.DialContext
	if _, ok := cc.RuntimeParams["statement_timeout"]; !ok {
		cc.RuntimeParams["statement_timeout"] = strconv.FormatInt(opts.Timeout.Milliseconds(), 10)
	}
	cc.DefaultQueryExecMode = pgx.QueryExecModeExec
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := New(pool, opts)
	r.own = true
	return r, nil
}

// New makes a Registry over a pool that stays yours: close the Registry before the pool.
func New(pool *pgxpool.Pool, opts Options) *Registry {
	opts.defaults()
	return &Registry{opts: opts, db: pool, gens: map[*grantGen]struct{}{}}
}

// Writer is this writer's name in the registry.
func (r *Registry) Writer() string { return r.opts.Writer }

// Grant is one grant as the registry returned it.
type Grant struct {
	GrantID, Token int64
	Kind           string // "snowflake" or "xid12"
	Slot           int
	Lo, Hi         int64         // the window in id-time (Snowflake: ms since EpochMs; xid12: unix s)
	EpochMs        int64         // the Snowflake epoch (unix ms); 0 for xid12
	LoUs, HiUs     int64         // the window in unix µs
	ServerUs       int64         // the server's clock when it answered, unix µs
	sent           time.Time     // when the statement was sent (the server read its clock after)
	wallUs         int64         // this writer's clock at the answer, unix µs
	rtt            time.Duration // the round trip
}

type statements struct{ acquire, acquireDefault, renew, release, report string }

func quoteIdent(s string) string {
	out := []byte{'"'}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, s[i])
	}
	return string(append(out, '"'))
}

// Each parameter is cast to the function's argument type, so no overload another role added
// to the schema is a better match; the window is read in id-time, the server's clock in µs.
func newStatements(schema string) *statements {
	s := quoteIdent(schema)
	row := "grant_id, token, kind, slot, COALESCE(epoch_ms, 0::pg_catalog.int8), lo_t, hi_t, " +
		"(pg_catalog.extract('epoch'::pg_catalog.text, server_time) OPERATOR(pg_catalog.*) 1000000::pg_catalog.numeric)::pg_catalog.int8"
	return &statements{
		acquire: "SELECT " + row + " FROM " + s + ".idgen_acquire($1::pg_catalog.text, $2::pg_catalog.text, " +
			"$3::pg_catalog.interval, $4::pg_catalog.text)",
		acquireDefault: "SELECT " + row + " FROM " + s + ".idgen_acquire($1::pg_catalog.text, $2::pg_catalog.text, pool => $3::pg_catalog.text)",
		renew:          "SELECT " + row + " FROM " + s + ".idgen_renew($1::pg_catalog.int8, $2::pg_catalog.int8, $3::pg_catalog.interval)",
		release:        "SELECT grant_id FROM " + s + ".idgen_release($1::pg_catalog.int8, $2::pg_catalog.int8, $3::pg_catalog.timestamptz)",
		// An edge device's report (docs/formats.md §10): grant, token, device, count, last
		// id's time, attempt; it returns the next count.
		report: "SELECT " + s + ".idgen_report($1::pg_catalog.int8, $2::pg_catalog.int8, $3::pg_catalog.text, " +
			"$4::pg_catalog.int8, $5::pg_catalog.timestamptz, $6::pg_catalog.int8)",
	}
}

// scanGrant reads a grant row of the statements acquire and renew.
func scanGrant(row pgx.Row, g *Grant) error {
	if err := row.Scan(&g.GrantID, &g.Token, &g.Kind, &g.Slot, &g.EpochMs, &g.Lo, &g.Hi, &g.ServerUs); err != nil {
		return err
	}
	g.windowUs()
	return nil
}

// windowUs sets LoUs, HiUs from the window in id-time (docs/formats.md §10): xid12 t·10^6,
// Snowflake (epoch_ms + t)·10^3.
func (g *Grant) windowUs() {
	if g.Kind == "snowflake" {
		g.LoUs, g.HiUs = (g.EpochMs+g.Lo)*1000, (g.EpochMs+g.Hi)*1000
	} else {
		g.LoUs, g.HiUs = g.Lo*1_000_000, g.Hi*1_000_000
	}
}

func (r *Registry) checkOpen() error {
	if r.closed.Load() {
		return &RegistryError{Message: say("registry", "closed", nil)}
	}
	return nil
}

// call runs one statement within r's Timeout (and ctx); a connection problem is tried once
// more while time is left, then RegistryUnavailable.
func (r *Registry) call(ctx context.Context, pick func(*statements) string, args ...any) (*Grant, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		r.mu.Lock()
		st := r.sql
		r.mu.Unlock()
		if st == nil {
			e, err := FindEdition(ctx, r.db)
			if errors.Is(err, ErrNoExtension) {
				return nil, &RegistryError{Message: err.Error(), Err: err}
			}
			if err != nil {
				if m := RegistryErrorOf(err); m != nil {
					return nil, m
				}
				last = err
				if ctx.Err() != nil {
					break
				}
				continue
			}
			st = newStatements(e.Schema)
			r.mu.Lock()
			r.sql = st
			r.mu.Unlock()
		}
		sent := time.Now()
		q := pick(st)
		g := &Grant{sent: sent}
		var err error
		if q == st.release {
			err = r.db.QueryRow(ctx, q, append([]any{pgx.QueryExecModeExec}, args...)...).Scan(&g.GrantID)
		} else {
			err = scanGrant(r.db.QueryRow(ctx, q, append([]any{pgx.QueryExecModeExec}, args...)...), g)
		}
		if err == nil {
			g.rtt, g.wallUs = time.Since(sent), r.opts.Clock().UnixMicro()
			return g, nil
		}
		if m := RegistryErrorOf(err); m != nil {
			return nil, m
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() != nil {
		return nil, unavailable(say("registry", "no_answer", map[string]any{"timeout": r.opts.Timeout}), last)
	}
	return nil, unavailable(say("registry", "unreachable", map[string]any{"cause": fmt.Sprint(last)}), last)
}

func leaseArg(lease string) any {
	if lease == "" {
		return nil
	}
	return lease
}

func (r *Registry) acquire(ctx context.Context, kind, lease string) (*Grant, error) {
	for attempt := 1; ; attempt++ {
		if err := r.checkOpen(); err != nil {
			return nil, err
		}
		var g *Grant
		var err error
		if lease == "" {
			g, err = r.call(ctx, func(s *statements) string { return s.acquireDefault }, kind, r.opts.Writer, r.opts.Pool)
		} else {
			g, err = r.call(ctx, func(s *statements) string { return s.acquire }, kind, r.opts.Writer, lease, r.opts.Pool)
		}
		var re *RegistryError
		// 55P03: concurrent acquires took every candidate first: try again.
		if err != nil && errors.As(err, &re) && re.SQLState == "55P03" && attempt < 5 {
			continue
		}
		return g, err
	}
}

// GrantOptions: the lease as an interval text ("2 minutes"); empty: the pool's default.
type GrantOptions struct{ Lease string }

// Snowflake acquires a grant and gives a Snowflake generator bound to it.
func (r *Registry) Snowflake(ctx context.Context, o GrantOptions) (*GrantSnowflake, error) {
	g := r.newGen("snowflake", o.Lease)
	g.sf = NewSnowflakeGrantState(DefaultSnowflakeEpochMs, r.opts.MaxWait.Milliseconds())
	if err := r.add(ctx, g); err != nil {
		return nil, err
	}
	return &GrantSnowflake{g}, nil
}

// Xid12 acquires a grant and gives an xid12 generator bound to it.
func (r *Registry) Xid12(ctx context.Context, o GrantOptions) (*GrantXid12, error) {
	g := r.newGen("xid12", o.Lease)
	var b [4]byte
	_, _ = rand.Read(b[:])
	g.xs = NewXidGrantState(os.Getpid(), binary.BigEndian.Uint32(b[:]), int64(r.opts.MaxWait/time.Second))
	if err := r.add(ctx, g); err != nil {
		return nil, err
	}
	return &GrantXid12{g}, nil
}

func (r *Registry) newGen(kind, lease string) *grantGen {
	return &grantGen{reg: r, kind: kind, lease: lease}
}

func (r *Registry) add(ctx context.Context, g *grantGen) error {
	if err := r.checkOpen(); err != nil {
		return err
	}
	g.opMu.Lock()
	gr, err := r.acquire(ctx, g.kind, g.lease)
	if err == nil {
		g.mu.Lock()
		err = g.bind(gr, false)
		g.mu.Unlock()
	}
	g.opMu.Unlock()
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.gens[g] = struct{}{}
	r.mu.Unlock()
	return nil
}

// Close releases every grant (with the time of the last id made under it) and stops the
// renewals, within Timeout; errors reaching the registry are given up (a grant not released
// ends with its window). A pool of its own is closed.
func (r *Registry) Close(ctx context.Context) error {
	if r.closed.Swap(true) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	r.mu.Lock()
	gens := make([]*grantGen, 0, len(r.gens))
	for g := range r.gens {
		gens = append(gens, g)
	}
	r.gens = map[*grantGen]struct{}{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, g := range gens {
		wg.Add(1)
		go func(g *grantGen) {
			defer wg.Done()
			_ = g.releaseGrant(ctx)
		}(g)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	if r.own {
		go r.db.Close() // waits for connections in use; the calls are bounded by their contexts
	}
	return nil
}
