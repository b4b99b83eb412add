package idgen

// A writer whose network link is cut past the end of its window (issue 46; the Python client's
// clients/python/tests/server/test_registry_link_cut.py), with real networking: the writer is
// this test binary run again inside a network namespace (TestMain, PG_IDGEN_LINKCUT_WRITER),
// joined to this machine by a veth pair, talking over TCP to a cluster of its own that also
// listens on the veth's address on this side. scripts/test_go.sh makes the namespace, the veth
// pair, their addresses and the cluster, and removes them after the run (its PG_IDGEN_LINKCUT_*
// variables); nothing else is ever a target. The link goes down (`ip link set ... down` on this
// side: the writer's packets go nowhere, its reads block) for longer than its 3 s lease:
//
//   - every call of NextID returns or fails with RegistryUnavailable within the bound
//     (RenewWait, 1 s, plus a margin), never blocked for the cut; the first failure comes
//     within that bound of the window's end;
//   - it makes no id outside its windows; another writer takes the slot meanwhile (one
//     Snowflake slot is left free) and the union of ids has no duplicate;
//   - when the link returns, it acquires a new grant and goes on;
//   - Close with the link down again returns within its bound (Timeout plus the margin).
//
// Times: each bound also allows twice the writer's measured scheduling delay (a goroutine's
// 50 ms sleeps beside its calls, its "lag" lines), so the pass does not depend on the
// machine's speed (docs/DEVELOPMENT.md, "Tests and time"). The writer and the server run on
// this machine's one wall clock (a network namespace has no clock of its own), so the writer's
// times are compared with the window's end as the server states it.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	linkCutRenewWait = time.Second     // the writer's RenewWait (the default): an id's bound at the window's end
	linkCutTimeout   = 5 * time.Second // the writer's Timeout: Close's bound; well past RenewWait, so
	// that only RenewWait can bound an id at the window's end
	linkCutMargin  = time.Second // the goroutine hand-offs and the writer's own pauses, on an idle machine
	linkCutLease   = "3 seconds"
	linkCutAfterHi = 6 * time.Second // the link stays down this long after the window's end
	linkCutFree    = 700             // the one Snowflake slot left free, where the writers meet
)

func TestMain(m *testing.M) {
	if os.Getenv("PG_IDGEN_LINKCUT_WRITER") != "" {
		os.Exit(linkCutWriter())
	}
	os.Exit(m.Run())
}

// linkCutWriter is the writer process (inside the namespace): Snowflake ids from a grant-bound
// generator, written to PG_IDGEN_LINKCUT_OUT after every batch of at most 20 calls:
//
//   - "id VALUE" for every id; "grant GRANT_ID SLOT" whenever it uses a new grant;
//   - "error START_US SECONDS CLASS MESSAGE" when NextID failed (START_US: the wall clock when
//     the call started, unix µs; SECONDS: how long it took); it then pauses 50 ms and goes on;
//   - "slow START_US SECONDS" for a call that made an id but took longer than 0.2 s;
//   - "lag SECONDS" whenever the longest lateness seen so far of a goroutine's 50 ms sleeps
//     beside the calls grows;
//   - when PG_IDGEN_LINKCUT_STOP exists: "closing START_US", then "closed SECONDS" (how long
//     Close took) and "end".
func linkCutWriter() int {
	ctx := context.Background()
	var lag atomic.Int64
	go func() {
		for {
			t := time.Now()
			time.Sleep(50 * time.Millisecond)
			if late := int64(time.Since(t) - 50*time.Millisecond); late > lag.Load() {
				lag.Store(late)
			}
		}
	}()
	out, err := os.Create(os.Getenv("PG_IDGEN_LINKCUT_OUT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer out.Close()
	timeout, _ := time.ParseDuration(os.Getenv("PG_IDGEN_LINKCUT_TIMEOUT"))
	reg, err := Open(ctx, os.Getenv("PG_IDGEN_LINKCUT_DSN"), Options{Writer: os.Getenv("PG_IDGEN_LINKCUT_WRITER"), Timeout: timeout})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sf, err := reg.Snowflake(ctx, GrantOptions{Lease: os.Getenv("PG_IDGEN_LINKCUT_LEASE")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	stop := os.Getenv("PG_IDGEN_LINKCUT_STOP")
	var grant int64 = -1
	var writtenLag int64
	var b bytes.Buffer
	for {
		if _, err := os.Stat(stop); err == nil {
			break
		}
		b.Reset()
		for range 20 {
			started := time.Now()
			v, err := sf.NextID(ctx)
			took := time.Since(started)
			if err != nil {
				fmt.Fprintf(&b, "error %d %.3f %s %s\n", started.UnixMicro(), took.Seconds(), errorClass(err),
					strings.ReplaceAll(err.Error(), "\n", " "))
				out.Write(b.Bytes())
				b.Reset()
				time.Sleep(50 * time.Millisecond)
				break
			}
			if took > 200*time.Millisecond {
				fmt.Fprintf(&b, "slow %d %.3f\n", started.UnixMicro(), took.Seconds())
			}
			if g := sf.Grant(); g != nil && g.GrantID != grant {
				fmt.Fprintf(&b, "grant %d %d\n", g.GrantID, g.Slot)
				grant = g.GrantID
			}
			fmt.Fprintf(&b, "id %d\n", v)
		}
		if l := lag.Load(); l > writtenLag {
			writtenLag = l
			fmt.Fprintf(&b, "lag %.3f\n", time.Duration(l).Seconds())
		}
		out.Write(b.Bytes())
		time.Sleep(10 * time.Millisecond)
	}
	started := time.Now()
	fmt.Fprintf(out, "closing %d\n", started.UnixMicro())
	_ = reg.Close(ctx)
	closed := time.Since(started)
	fmt.Fprintf(out, "lag %.3f\nclosed %.3f\nend\n", time.Duration(lag.Load()).Seconds(), closed.Seconds())
	return 0
}

// errorClass names the error's type: the one of this package's it is (errors.As), else Go's.
func errorClass(err error) string {
	var (
		un    *RegistryUnavailable
		ahead *ClockAheadOfWindow
		bef   *ClockBeforeWindow
		back  *ClockMovedBack
		lost  *GrantLost
	)
	switch {
	case errors.As(err, &un):
		return "RegistryUnavailable"
	case errors.As(err, &ahead):
		return "ClockAheadOfWindow"
	case errors.As(err, &bef):
		return "ClockBeforeWindow"
	case errors.As(err, &back):
		return "ClockMovedBack"
	case errors.As(err, &lost):
		return "GrantLost"
	}
	return fmt.Sprintf("%T", err)
}

// linkCutCall is one failed or slow call of the writer's.
type linkCutCall struct {
	start time.Time
	took  time.Duration
	class string
}

func (c linkCutCall) end() time.Time { return c.start.Add(c.took) }

type linkCutOutput struct {
	ids           []int64
	errors, slow  []linkCutCall
	grants        [][2]int64
	lag           time.Duration
	closed        time.Duration
	closedWritten bool
}

func seconds(s string) time.Duration {
	f, _ := strconv.ParseFloat(s, 64)
	return time.Duration(f * float64(time.Second))
}

func unixMicro(s string) time.Time {
	us, _ := strconv.ParseInt(s, 10, 64)
	return time.UnixMicro(us)
}

// readLinkCut reads the writer's lines (a last line being written is left for the next read).
func readLinkCut(path string) linkCutOutput {
	var o linkCutOutput
	text, _ := os.ReadFile(path)
	if i := bytes.LastIndexByte(text, '\n'); i >= 0 {
		text = text[:i+1]
	} else {
		text = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 5)
		switch f[0] {
		case "id":
			v, _ := strconv.ParseInt(f[1], 10, 64)
			o.ids = append(o.ids, v)
		case "error":
			o.errors = append(o.errors, linkCutCall{unixMicro(f[1]), seconds(f[2]), f[3]})
		case "slow":
			o.slow = append(o.slow, linkCutCall{unixMicro(f[1]), seconds(f[2]), ""})
		case "grant":
			id, _ := strconv.ParseInt(f[1], 10, 64)
			slot, _ := strconv.ParseInt(f[2], 10, 64)
			o.grants = append(o.grants, [2]int64{id, slot})
		case "lag":
			o.lag = max(o.lag, seconds(f[1]))
		case "closed":
			o.closed, o.closedWritten = seconds(f[1]), true
		}
	}
	return o
}

// poll calls done every 50 ms until it holds; the cap only ends a hang.
func poll(t *testing.T, what string, limit time.Duration, done func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !done(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, limit)
		}
	}
}

func ipCommand(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// TestServerLinkCut: see the top of this file.
func TestServerLinkCut(t *testing.T) {
	if why := os.Getenv("PG_IDGEN_LINKCUT_SKIP"); why != "" {
		t.Skip(why)
	}
	ns, hostIf, addr := os.Getenv("PG_IDGEN_LINKCUT_NS"), os.Getenv("PG_IDGEN_LINKCUT_IF"), os.Getenv("PG_IDGEN_LINKCUT_ADDR")
	sock, port := os.Getenv("PG_IDGEN_LINKCUT_SOCK"), os.Getenv("PG_IDGEN_LINKCUT_PORT")
	if ns == "" || hostIf == "" || addr == "" || sock == "" || port == "" {
		t.Skip("PG_IDGEN_LINKCUT_* not set: scripts/test_go.sh makes the network namespace and the cluster")
	}
	ctx := context.Background()
	local := fmt.Sprintf("host=%s port=%s user=postgres", sock, port)
	admin := connectTo(t, local+" dbname=postgres")
	for _, q := range []string{"DROP DATABASE IF EXISTS go_linkcut WITH (FORCE)", "CREATE DATABASE go_linkcut"} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	conn := connectTo(t, local+" dbname=go_linkcut")
	if _, err := conn.Exec(ctx, "CREATE EXTENSION pg_idgen"); err != nil {
		t.Fatal(err)
	}
	// Every Snowflake slot but one reserved, so that the two writers meet on it.
	if _, err := conn.Exec(ctx, fmt.Sprintf(`
		DO $$ BEGIN
			FOR s IN 0..1023 LOOP
				IF s <> %d THEN
					BEGIN
						PERFORM idgen_reserve('snowflake', s, 'filler');
					EXCEPTION WHEN OTHERS THEN NULL; -- the server's own worker id
					END;
				END IF;
			END LOOP;
		END $$`, linkCutFree)); err != nil {
		t.Fatal(err)
	}
	var held int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM idgen_registry_grant WHERE kind = 'snowflake' AND reserved`).Scan(&held); err != nil || held < 1022 {
		t.Fatalf("%d slots reserved (%v)", held, err)
	}

	dir := t.TempDir()
	out, stop := filepath.Join(dir, "a.txt"), filepath.Join(dir, "stop")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	writer := exec.Command("ip", "netns", "exec", ns, exe)
	writer.Env = append(os.Environ(), "PG_IDGEN_LINKCUT_WRITER=cut-A",
		fmt.Sprintf("PG_IDGEN_LINKCUT_DSN=host=%s port=%s user=postgres dbname=go_linkcut sslmode=disable", addr, port),
		"PG_IDGEN_LINKCUT_LEASE="+linkCutLease, "PG_IDGEN_LINKCUT_OUT="+out, "PG_IDGEN_LINKCUT_STOP="+stop,
		"PG_IDGEN_LINKCUT_TIMEOUT="+linkCutTimeout.String())
	var writerOut bytes.Buffer
	writer.Stdout, writer.Stderr = &writerOut, &writerOut
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var ended atomic.Bool
	go func() {
		err := writer.Wait()
		ended.Store(true)
		exited <- err
	}()
	running := func() bool { return !ended.Load() }
	cut := func() time.Time { ipCommand(t, "link", "set", hostIf, "down"); return time.Now() }
	mend := func() time.Time { ipCommand(t, "link", "set", hostIf, "up"); return time.Now() }
	defer func() {
		if running() {
			writer.Process.Kill()
			<-exited
		}
		_ = exec.Command("ip", "link", "set", hostIf, "up").Run()
	}()

	poll(t, "writer A's first ids", 60*time.Second, func() bool { return len(readLinkCut(out).ids) >= 200 || !running() })
	if !running() {
		t.Fatalf("writer A ended: %v\n%s", <-exited, writerOut.String())
	}
	if g := readLinkCut(out).grants; g[0][1] != linkCutFree {
		t.Fatalf("writer A's grant %v is not on the free slot %d", g[0], linkCutFree)
	}
	cutAt := cut()
	atCut := len(readLinkCut(out).ids)
	// The end of every window A holds, on the server's clock; then the link stays down
	// linkCutAfterHi longer.
	var hi time.Time
	if err := conn.QueryRow(ctx, `SELECT max(hi) FROM idgen_grants WHERE writer = 'cut-A'`).Scan(&hi); err != nil {
		t.Fatal(err)
	}
	poll(t, "A's window to end", 60*time.Second, func() bool {
		var ended bool
		return conn.QueryRow(ctx, `SELECT clock_timestamp() > $1`, hi).Scan(&ended) == nil && ended
	})
	endedAt := time.Now()

	// Writer B takes the slot for the id-time after A's window, then releases it.
	regB, err := Open(ctx, local+" dbname=go_linkcut", Options{Writer: "cut-B"})
	if err != nil {
		t.Fatal(err)
	}
	var b *GrantSnowflake
	poll(t, "B's grant", 60*time.Second, func() bool {
		var exhausted *SlotsExhausted
		b, err = regB.Snowflake(ctx, GrantOptions{Lease: "1 minute"})
		if err != nil && !errors.As(err, &exhausted) {
			t.Fatal(err)
		}
		return err == nil
	})
	if slot := b.Grant().Slot; slot != linkCutFree {
		t.Fatalf("B's slot %d, want %d", slot, linkCutFree)
	}
	var bIDs []int64
	makeB := func(n int) {
		for range n {
			id, err := b.NextID(ctx)
			if err != nil {
				t.Fatalf("writer B: %v", err)
			}
			bIDs = append(bIDs, id)
		}
	}
	makeB(5000)
	for time.Now().Before(endedAt.Add(linkCutAfterHi)) {
		makeB(100)
		time.Sleep(10 * time.Millisecond)
	}
	if err := regB.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// While the link was down: A made no id past its window, failed within the bound, and no
	// call took longer.
	a := readLinkCut(out)
	insideOwnWindows(t, conn, "cut-A", a.ids)
	var afterEnd []linkCutCall
	for _, e := range a.errors {
		if !e.end().Before(hi.Add(-500 * time.Millisecond)) {
			afterEnd = append(afterEnd, e)
		}
	}
	if len(afterEnd) == 0 {
		t.Fatalf("writer A failed nothing in the %s since its window ended (%d ids, %d at the cut): NextID is blocked on the cut link",
			time.Since(hi).Round(time.Millisecond), len(a.ids), atCut)
	}
	first := afterEnd[0].end().Sub(hi)
	var longest time.Duration
	for _, c := range slices.Concat(a.errors, a.slow) {
		longest = max(longest, c.took)
	}
	t.Logf("link cut: first error %.2f s after the window's end, longest call %.2f s, %d errors and %d ids "+
		"(%d before the cut) during a %.1f s cut; writer B made %d ids meanwhile; scheduling delay %.3f s",
		first.Seconds(), longest.Seconds(), len(a.errors), len(a.ids), atCut, time.Since(cutAt).Seconds(), len(bIDs), a.lag.Seconds())
	lag := 2 * a.lag
	if longest > linkCutRenewWait+linkCutMargin+lag {
		t.Errorf("a call took %.2f s (bound %s + %s + twice a %.3f s delay)", longest.Seconds(), linkCutRenewWait, linkCutMargin, a.lag.Seconds())
	}
	if first > linkCutRenewWait+linkCutMargin+500*time.Millisecond+lag {
		t.Errorf("the first error came %.2f s after the window's end", first.Seconds())
	}
	for _, e := range a.errors {
		if e.class != "RegistryUnavailable" {
			t.Fatalf("writer A failed with %s, want RegistryUnavailable (%d errors)", e.class, len(a.errors))
		}
	}
	madeInCut := len(a.ids)

	// The link returns: A goes on with a new grant (its old one was continued by B).
	upAt := mend()
	poll(t, "A's ids after the link returned", 60*time.Second, func() bool {
		o := readLinkCut(out)
		return len(o.grants) > len(a.grants) && len(o.ids) > madeInCut+200 || !running()
	})
	back := readLinkCut(out)
	if !running() {
		t.Fatalf("writer A ended: %v\n%s", <-exited, writerOut.String())
	}
	t.Logf("link back: A made ids with a new grant within %.2f s (polled), grants %v", time.Since(upAt).Seconds(), back.grants)
	if back.grants[len(back.grants)-1][0] == a.grants[len(a.grants)-1][0] {
		t.Fatalf("A's grant %v after the link returned", back.grants)
	}

	// Close with the link down again is bounded.
	cut()
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("writer A: %v\n%s", err, writerOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("writer A did not end within 60 s of the stop file (Close with the link down)")
	}
	end := readLinkCut(out)
	t.Logf("close with the link down took %.2f s (bound %s + margin; delay %.3f s)", end.closed.Seconds(), linkCutTimeout, end.lag.Seconds())
	if !end.closedWritten || end.closed > linkCutTimeout+linkCutMargin+2*end.lag {
		t.Errorf("Close took %.2f s with the link down (written: %v)", end.closed.Seconds(), end.closedWritten)
	}
	mend()

	// No id outside A's windows (nor B's), no duplicate in the union; A's increasing.
	insideOwnWindows(t, conn, "cut-A", end.ids)
	insideOwnWindows(t, conn, "cut-B", bIDs)
	seen := map[int64]bool{}
	for _, id := range slices.Concat(end.ids, bIDs) {
		if seen[id] {
			t.Fatalf("snowflake %d made twice", id)
		}
		seen[id] = true
	}
	for i := 1; i < len(end.ids); i++ {
		if end.ids[i] <= end.ids[i-1] {
			t.Fatalf("writer A's id %d after %d", end.ids[i], end.ids[i-1])
		}
	}
	t.Logf("%d ids of A and %d of B, all distinct, each inside its writer's windows", len(end.ids), len(bIDs))
}

func connectTo(t *testing.T, dsn string) *pgx.Conn {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}

// insideOwnWindows: every id has the slot and an id-time of one of the writer's windows, and
// idgen_writer_of names this writer for it.
func insideOwnWindows(t *testing.T, c *pgx.Conn, writer string, ids []int64) {
	t.Helper()
	spans := writerSpans(t, c, writer, "snowflake")
	for _, id := range ids {
		if !inside(spans, packSnowflake(id)) {
			t.Fatalf("%s's snowflake %d is outside its windows", writer, id)
		}
	}
	var bad int
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM unnest($1::bigint[]) i
		WHERE (SELECT w.writer FROM idgen_writer_of(i) w) IS DISTINCT FROM $2`, ids, writer).Scan(&bad); err != nil || bad != 0 {
		t.Fatalf("idgen_writer_of does not name %s for %d of its ids (%v)", writer, bad, err)
	}
}
