package idgen

// Edge devices against the registry (issue 46): EdgeStore.Sync as the Python, Rust and Java
// stores do it. The devices' clocks are fake (the real time plus the days they spend offline);
// the server's is real. Skipped without PG_IDGEN_HOST/PG_IDGEN_PORT.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/mattn/go-sqlite3"
)

const dayUs = int64(86_400_000_000)

// edgeAcquire takes a grant of the 'edge' pool for a device to enrol with.
func edgeAcquire(t *testing.T, c *pgx.Conn, kind, writer, lease string) *Grant {
	ctx := context.Background()
	e, err := FindEdition(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	g := &Grant{}
	if err := scanGrant(c.QueryRow(ctx, newStatements(e.Schema).acquire, pgx.QueryExecModeExec, kind, writer, lease, "edge"), g); err != nil {
		t.Fatal(err)
	}
	return g
}

func deviceFile(t *testing.T, path string) *sql.DB {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS rows (id TEXT PRIMARY KEY, n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// offline makes ids over days of the device clock, each committed with its row.
func offline(t *testing.T, db *sql.DB, s *EdgeStore, clock *int64, days, perDay, start int) []EdgeID {
	ctx := context.Background()
	var ids []EdgeID
	for i := 0; i < days*perDay; i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		id, err := s.NextIDTx(ctx, tx, *clock)
		if err != nil {
			t.Fatal(err)
		}
		text := id.Xid.String()
		if s.kind == "snowflake" {
			text = strconv.FormatInt(id.Snowflake, 10)
		}
		if _, err := tx.Exec(`INSERT INTO rows VALUES (?, ?)`, text, start+i); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		*clock += dayUs / int64(perDay)
	}
	return ids
}

// serverGrant: the registry's pool, window end (unix µs) and whether it was released.
func serverGrant(t *testing.T, c *pgx.Conn, grantID int64) (pool string, hiUs int64, released bool) {
	err := c.QueryRow(context.Background(), `SELECT pool, (extract(epoch FROM hi) * 1000000)::int8, released_at IS NOT NULL
		FROM idgen_grants WHERE grant_id = $1`, grantID).Scan(&pool, &hiUs, &released)
	if err != nil {
		t.Fatal(err)
	}
	return
}

func reported(t *testing.T, c *pgx.Conn, grantID int64) (device string, syncs int64) {
	err := c.QueryRow(context.Background(), `SELECT device, syncs FROM idgen_registry_report WHERE grant_id = $1`, grantID).Scan(&device, &syncs)
	if err != nil {
		t.Fatal(err)
	}
	return
}

// fileState: the file's syncs, hi_us, and whether an attempt is kept.
func fileState(t *testing.T, db *sql.DB, kind string) (syncs, hiUs int64, attempt bool) {
	err := db.QueryRow(`SELECT syncs, hi_us, attempt IS NOT NULL FROM pg_idgen_edge WHERE kind = ?`, kind).Scan(&syncs, &hiUs, &attempt)
	if err != nil {
		t.Fatal(err)
	}
	return
}

func copyFile(t *testing.T, db *sql.DB, to string) {
	if _, err := db.Exec(`VACUUM INTO ?`, to); err != nil {
		t.Fatal(err)
	}
}

// TestServerEdgeSync: an xid12 device enrols in pool 'edge', makes ids offline for three
// days, syncs (count 1, the renewed window's end in the file and on the server); a copy of its
// file on a second device goes on from the same state (the same ids) and is found at its sync
// (EdgeCloned, a DeviceConflict, both devices named) and makes no more ids; the original's rows
// merge with every id covered (idgen_verify); its release ends the window just after its last id.
func TestServerEdgeSync(t *testing.T) {
	ctx := context.Background()
	name := freshDB(t, "go_edge_xid12")
	pg, admin := connect(t, name), connect(t, name)
	dir := t.TempDir()
	clockA := time.Now().UnixMicro()
	a := deviceFile(t, filepath.Join(dir, "phone-a.db"))
	storeA, err := NewEdgeStore(ctx, a, "xid12", "phone-a")
	if err != nil {
		t.Fatal(err)
	}
	g := edgeAcquire(t, pg, "xid12", "edge-test@phone-a", "28 days")
	if err := storeA.Enrol(ctx, g, "edge-test@phone-a"); err != nil {
		t.Fatal(err)
	}
	if pool, hi, _ := serverGrant(t, admin, g.GrantID); pool != "edge" || hi != g.HiUs {
		t.Fatalf("the server's grant: pool %s, hi %d; the file's hi %d", pool, hi, g.HiUs)
	}

	// Three days offline, then back online: report 1, and the window runs 28 days from now.
	before := offline(t, a, storeA, &clockA, 3, 40, 0)
	s1, err := storeA.Sync(ctx, pg, SyncOptions{})
	if err != nil {
		t.Fatal(err)
	}
	syncs, hi, attempt := fileState(t, a, "xid12")
	if s1.Syncs != 1 || syncs != 1 || attempt || hi != s1.HiUs || s1.Released {
		t.Fatalf("sync %+v; the file: syncs %d, hi %d, attempt kept %v", s1, syncs, hi, attempt)
	}
	if _, serverHi, _ := serverGrant(t, admin, g.GrantID); serverHi != s1.HiUs || s1.HiUs < g.HiUs {
		t.Fatalf("renewed to %d, the server's end %d, the enrolled end %d", s1.HiUs, serverHi, g.HiUs)
	}
	if dev, n := reported(t, admin, g.GrantID); dev != "phone-a" || n != 1 {
		t.Fatalf("the registry's report: %s %d", dev, n)
	}

	// Inside a PostgreSQL transaction: refused, nothing sent.
	tx, err := pg.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = storeA.Sync(ctx, pg, SyncOptions{})
	var ee *EdgeError
	if !errors.As(err, &ee) || err.Error() != say("edge", "postgres_in_transaction", nil) {
		t.Fatalf("a sync inside a transaction: %v", err)
	}
	_ = tx.Rollback(ctx)
	other, _ := NewEdgeStore(ctx, a, "snowflake", "phone-a")
	if _, err := other.Sync(ctx, pg, SyncOptions{}); !errors.As(err, &ee) ||
		err.Error() != "this store holds no snowflake grant on device 'phone-a'" {
		t.Fatalf("a sync without a grant: %v", err)
	}

	// A backup of the file, restored on a second device.
	copyFile(t, a, filepath.Join(dir, "phone-b.db"))
	b := deviceFile(t, filepath.Join(dir, "phone-b.db"))
	storeB, _ := NewEdgeStore(ctx, b, "xid12", "phone-b")
	clockB := clockA
	// Both go on from the same state and the same time: the same ids, why a copy must be
	// found before the rows are merged.
	afterA := offline(t, a, storeA, &clockA, 2, 40, 1000)
	afterB := offline(t, b, storeB, &clockB, 2, 40, 1000)
	for i := range afterA {
		if afterA[i] != afterB[i] {
			t.Fatalf("id %d: %v on a, %v on its copy", i, afterA[i].Xid, afterB[i].Xid)
		}
	}
	if s2, err := storeA.Sync(ctx, pg, SyncOptions{}); err != nil || s2.Syncs != 2 {
		t.Fatalf("the second sync: %+v %v", s2, err)
	}
	_, err = storeB.Sync(ctx, pg, SyncOptions{})
	var cloned *EdgeCloned
	var conflict *DeviceConflict
	var re *RegistryError
	if !errors.As(err, &cloned) || !errors.As(err, &conflict) || !errors.As(err, &re) || re.SQLState != "23505" {
		t.Fatalf("the copy's sync: %T %v", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "grant "+strconv.FormatInt(g.GrantID, 10)+" is used by two devices") || !strings.Contains(msg, " (DETAIL: ") ||
		!strings.Contains(msg, "'phone-b'") || !strings.Contains(msg, "'phone-a'") {
		t.Fatalf("the copy's sync: %s", msg)
	}
	_, err = storeB.NextID(ctx, clockB)
	if !errors.As(err, &cloned) || !errors.As(err, &conflict) || err.Error() != "no id is made: "+msg {
		t.Fatalf("an id of the copy after its sync: %v", err)
	}
	if dev, n := reported(t, admin, g.GrantID); dev != "phone-a" || n != 2 {
		t.Fatalf("the registry's report after the copy's sync: %s %d", dev, n)
	}

	// The original's rows merged into PostgreSQL: every id covered by its grant.
	if _, err := admin.Exec(ctx, `CREATE TABLE staging (id xid12 PRIMARY KEY, n int)`); err != nil {
		t.Fatal(err)
	}
	rows, err := a.Query(`SELECT id, n FROM rows ORDER BY n`)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]EdgeID{}, before...), afterA...)
	k := 0
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		if id != all[k].Xid.String() {
			t.Fatalf("row %d: %s, made %s", k, id, all[k].Xid)
		}
		k++
		if _, err := admin.Exec(ctx, `INSERT INTO staging VALUES ($1::text::xid12, $2)`, id, n); err != nil {
			t.Fatal(err)
		}
	}
	if k != len(all) {
		t.Fatalf("%d rows, %d ids", k, len(all))
	}
	var uncovered int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM idgen_verify('staging', 'id')`).Scan(&uncovered); err != nil || uncovered != 0 {
		t.Fatalf("%d ids not covered by a grant (%v)", uncovered, err)
	}

	// Done with the device: the window ends just after its last id, the rest is free.
	last := afterA[len(afterA)-1]
	r, err := storeA.Sync(ctx, pg, SyncOptions{Release: true})
	if err != nil || !r.Released || r.Syncs != 3 {
		t.Fatalf("the release: %+v %v", r, err)
	}
	wantHi := int64(last.Xid.Time().Unix()+1) * 1_000_000
	if _, serverHi, released := serverGrant(t, admin, g.GrantID); !released || serverHi != wantHi || r.HiUs != wantHi {
		t.Fatalf("released %v, the server's end %d, the sync's %d, want %d", released, serverHi, r.HiUs, wantHi)
	}
	var left int
	_ = a.QueryRow(`SELECT count(*) FROM pg_idgen_edge WHERE kind = 'xid12'`).Scan(&left)
	if left != 0 {
		t.Fatal("the file still holds the released grant")
	}
	if _, err := storeA.NextID(ctx, clockA); !errors.As(err, &ee) {
		t.Fatalf("an id after the release: %v", err)
	}
}

// TestServerEdgeSnowflakeSync: a Snowflake device renews for 7 days; a wrong token is the
// server's WrongToken (the file keeps its count); the release ends the window one millisecond
// after the last id.
func TestServerEdgeSnowflakeSync(t *testing.T) {
	ctx := context.Background()
	name := freshDB(t, "go_edge_snowflake")
	pg, admin := connect(t, name), connect(t, name)
	clock := time.Now().UnixMicro()
	d := deviceFile(t, filepath.Join(t.TempDir(), "box.db"))
	store, _ := NewEdgeStore(ctx, d, "snowflake", "box-1")
	g := edgeAcquire(t, pg, "snowflake", "edge-test@box-1", "7 days")
	if err := store.Enrol(ctx, g, "edge-test@box-1"); err != nil {
		t.Fatal(err)
	}
	ids := offline(t, d, store, &clock, 2, 50, 0)
	s1, err := store.Sync(ctx, pg, SyncOptions{Lease: "7 days"})
	if err != nil || s1.Syncs != 1 {
		t.Fatalf("%+v %v", s1, err)
	}
	ids = append(ids, offline(t, d, store, &clock, 1, 50, 1000)...)
	if _, err := d.Exec(`UPDATE pg_idgen_edge SET token = token + 1`); err != nil {
		t.Fatal(err)
	}
	_, err = store.Sync(ctx, pg, SyncOptions{})
	var wrong *WrongToken
	if !errors.As(err, &wrong) {
		t.Fatalf("a wrong token: %T %v", err, err)
	}
	if syncs, _, _ := fileState(t, d, "snowflake"); syncs != 1 {
		t.Fatalf("the count after a refused sync: %d", syncs)
	}
	if _, err := d.Exec(`UPDATE pg_idgen_edge SET token = token - 1`); err != nil {
		t.Fatal(err)
	}
	last := ids[len(ids)-1]
	r, err := store.Sync(ctx, pg, SyncOptions{Release: true})
	if err != nil || !r.Released {
		t.Fatalf("the release: %+v %v", r, err)
	}
	if _, hi, released := serverGrant(t, admin, g.GrantID); !released || hi != last.IDTimeUs+1000 {
		t.Fatalf("released %v, the server's end %d, want %d", released, hi, last.IDTimeUs+1000)
	}
}

// replyLost is a connection to the server on which the reply to COMMIT arrives and is
// dropped: it reads that reply to its ReadyForQuery (so the server has committed), then the
// link fails.
type replyLost struct {
	net.Conn
	committing, lost atomic.Bool
}

func (c *replyLost) Write(p []byte) (int, error) {
	if i := bytes.Index(p, []byte("commit\x00")); i >= 5 && p[i-5] == 'Q' {
		c.committing.Store(true)
	}
	return c.Conn.Write(p)
}

func (c *replyLost) Read(p []byte) (int, error) {
	if !c.committing.Load() {
		return c.Conn.Read(p)
	}
	var seen []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(seen, []byte("COMMIT\x00Z\x00\x00\x00\x05I")) {
		n, err := c.Conn.Read(buf)
		seen = append(seen, buf[:n]...)
		if err != nil {
			return 0, err
		}
	}
	c.lost.Store(true)
	_ = c.Conn.Close()
	return 0, io.ErrUnexpectedEOF
}

// TestServerEdgeSyncLostReply: the server commits a sync's report and renewal, and the reply
// never reaches the device (RegistryUnavailable). The next sync sends the same report again
// (the attempt kept in the file) and is answered with the same count, not EdgeCloned; the
// device goes on; a copy of the file made while the reply was lost, on another device, is
// still found.
func TestServerEdgeSyncLostReply(t *testing.T) {
	ctx := context.Background()
	name := freshDB(t, "go_edge_lost_reply")
	pg, admin := connect(t, name), connect(t, name)
	dir := t.TempDir()
	clock := time.Now().UnixMicro()
	db := deviceFile(t, filepath.Join(dir, "tablet.db"))
	store, err := NewEdgeStore(ctx, db, "xid12", "tablet")
	if err != nil {
		t.Fatal(err)
	}
	g := edgeAcquire(t, pg, "xid12", "edge-test@tablet", "28 days")
	if err := store.Enrol(ctx, g, "edge-test@tablet"); err != nil {
		t.Fatal(err)
	}
	offline(t, db, store, &clock, 1, 10, 0)

	cfg, err := pgx.ParseConfig(dsn(t, name))
	if err != nil {
		t.Fatal(err)
	}
	var lossy *replyLost
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		lossy = &replyLost{Conn: c}
		return lossy, nil
	}
	lost, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer lost.Close(ctx)
	_, err = store.Sync(ctx, lost, SyncOptions{})
	var unavailable *RegistryUnavailable
	if !errors.As(err, &unavailable) || !lossy.lost.Load() {
		t.Fatalf("a sync whose reply was lost: %T %v (lost: %v)", err, err, lossy.lost.Load())
	}
	if dev, n := reported(t, admin, g.GrantID); dev != "tablet" || n != 1 {
		t.Fatalf("the server has it: %s %d", dev, n)
	}
	if syncs, _, attempt := fileState(t, db, "xid12"); syncs != 0 || !attempt {
		t.Fatalf("the file after the lost reply: syncs %d, attempt kept %v", syncs, attempt)
	}
	copyFile(t, db, filepath.Join(dir, "tablet-copy.db")) // the same count and attempt

	offline(t, db, store, &clock, 1, 10, 10)
	s, err := store.Sync(ctx, pg, SyncOptions{})
	if err != nil || s.Syncs != 1 {
		t.Fatalf("the same report again: %+v %v", s, err) // the count it missed, not EdgeCloned
	}
	if syncs, _, attempt := fileState(t, db, "xid12"); syncs != 1 || attempt {
		t.Fatalf("the file after the reply: syncs %d, attempt kept %v", syncs, attempt)
	}
	if dev, n := reported(t, admin, g.GrantID); dev != "tablet" || n != 1 {
		t.Fatalf("the registry after the report sent again: %s %d", dev, n)
	}
	if s, err := store.Sync(ctx, pg, SyncOptions{}); err != nil || s.Syncs != 2 {
		t.Fatalf("and on as usual: %+v %v", s, err)
	}
	clone := deviceFile(t, filepath.Join(dir, "tablet-copy.db"))
	copyStore, _ := NewEdgeStore(ctx, clone, "xid12", "tablet-2")
	_, err = copyStore.Sync(ctx, pg, SyncOptions{})
	var cloned *EdgeCloned
	if !errors.As(err, &cloned) || !strings.Contains(err.Error(), "'tablet-2'") || !strings.Contains(err.Error(), "'tablet'") {
		t.Fatalf("the copy made while the reply was lost: %v", err)
	}
}
