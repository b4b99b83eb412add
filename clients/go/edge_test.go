package idgen

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	_ "github.com/mattn/go-sqlite3" // Debian's golang-github-mattn-go-sqlite3-dev
	"github.com/rs/xid"
)

func TestEdgeStoreVector(t *testing.T) {
	var v struct {
		Table, Enrol string
		Columns      []string
	}
	load(t, "edge_store.json", &v)
	if EdgeTable != v.Table || edgeEnrol != v.Enrol {
		t.Fatal("the edge table or enrolment differs from tests/vectors/edge_store.json")
	}
	db := openSQLite(t)
	if _, err := NewEdgeStore(context.Background(), db, "xid12", "test-device"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT name FROM pragma_table_info('pg_idgen_edge') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for rows.Next() {
		var c string
		_ = rows.Scan(&c)
		cols = append(cols, c)
	}
	if !reflect.DeepEqual(cols, append([]string{"kind"}, v.Columns...)) {
		t.Fatalf("columns %v", cols)
	}
}

func openSQLite(t *testing.T) *sql.DB {
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "device.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestEdgeTraces(t *testing.T) {
	var v struct {
		Cases []struct {
			Name, Kind string
			State      map[string]any
			Pid        int
			Counter    uint32
			Steps      []map[string]any
		}
	}
	load(t, "edge_traces.json", &v)
	if len(v.Cases) == 0 {
		t.Fatal("no cases")
	}
	ctx := context.Background()
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			db := openSQLite(t)
			s, err := NewEdgeStore(ctx, db, c.Kind, "trace-device")
			if err != nil {
				t.Fatal(err)
			}
			s.Pid = func() int { return c.Pid }
			s.Counter = func() uint32 { return c.Counter }
			st := c.State
			var epoch, lastID, lastUs, cloned any
			if st["epoch_ms"] != nil {
				epoch = num(t, st["epoch_ms"])
			}
			if st["last_id"] != nil {
				if c.Kind == "xid12" {
					raw, _ := hex.DecodeString(st["last_id"].(string))
					id, _ := xid.FromBytes(raw)
					lastID = id.String()
				} else {
					lastID = num(t, st["last_id"])
				}
				lastUs = num(t, st["last_id_us"])
			}
			if st["cloned"] != nil {
				cloned = st["cloned"]
			}
			slot, loUs := num(t, st["slot"]), num(t, st["lo_us"])
			hiUs := num(t, st["hi_us"])
			if _, err := db.Exec(edgeEnrol, c.Kind, 7, 8, slot, loUs, hiUs, epoch, "trace"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ?, cloned = ?`, lastID, lastUs, cloned); err != nil {
				t.Fatal(err)
			}
			for i, step := range c.Steps {
				if r, ok := step["renew"].(map[string]any); ok {
					hiUs = num(t, r["hi_us"])
					if err := s.Renewed(ctx, hiUs); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want := step["expect"].(map[string]any)
				if step["release"] != nil {
					hi, err := s.PrepareRelease(ctx)
					if err != nil || hi != num(t, want["hi_us"]) {
						t.Fatalf("step %d: release stores %d (%v), want %v", i, hi, err, want["hi_us"])
					}
					hiUs = hi
					continue
				}
				var before []byte
				_ = db.QueryRow(`SELECT quote(last_id) || quote(last_id_us) FROM pg_idgen_edge`).Scan(&before)
				id, err := s.NextID(ctx, num(t, step["now_us"]))
				if refused, ok := want["refused"].(string); ok {
					var cl *EdgeCloned
					var cb *EdgeClockBeforeWindow
					var we *EdgeWindowEnded
					okRefusal := map[string]bool{
						"cloned":              errors.As(err, &cl),
						"clock_before_window": errors.As(err, &cb),
						"window_ended":        errors.As(err, &we) && !we.UsedUp,
						"used_up":             errors.As(err, &we) && we.UsedUp,
					}[refused]
					if !okRefusal {
						t.Fatalf("step %d: %v, want %s", i, err, refused)
					}
					var after []byte
					_ = db.QueryRow(`SELECT quote(last_id) || quote(last_id_us) FROM pg_idgen_edge`).Scan(&after)
					if !bytes.Equal(before, after) {
						t.Fatalf("step %d: a refusal changed the mark", i)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				var got string
				if c.Kind == "xid12" {
					got = hex.EncodeToString(id.Xid[:])
					m := id.Xid.Machine()
					if int64(m[0])<<16|int64(m[1])<<8|int64(m[2]) != slot {
						t.Fatalf("step %d: id of another slot", i)
					}
				} else {
					got = string(mustJSON(id.Snowflake))
					if d, _ := DecodeSnowflake(id.Snowflake, 0); int64(d.Worker) != slot {
						t.Fatalf("step %d: id of another slot", i)
					}
				}
				if got != string(mustJSON(want["id"])) && `"`+got+`"` != string(mustJSON(want["id"])) || id.IDTimeUs != num(t, want["last_id_us"]) {
					t.Fatalf("step %d: %s at %d, want %v at %v", i, got, id.IDTimeUs, want["id"], want["last_id_us"])
				}
				if id.IDTimeUs < loUs || id.IDTimeUs >= hiUs {
					t.Fatalf("step %d: id-time %d outside [%d, %d)", i, id.IDTimeUs, loUs, hiUs)
				}
				var stored, storedUs any
				_ = db.QueryRow(`SELECT last_id, last_id_us FROM pg_idgen_edge`).Scan(&stored, &storedUs)
				if c.Kind == "xid12" && textOf(stored) != id.Xid.String() || c.Kind == "snowflake" && stored != id.Snowflake || storedUs != id.IDTimeUs {
					t.Fatalf("step %d: the row keeps %v %v", i, stored, storedUs)
				}
			}
		})
	}
}

// TestEdgeStoreFirstID: a store as NewEdgeStore makes it (no test seams set) makes its first
// xid12 id with the process id's low 16 bits and the grant's slot.
func TestEdgeStoreFirstID(t *testing.T) {
	ctx := context.Background()
	s, err := NewEdgeStore(ctx, openSQLite(t), "xid12", "test-device")
	if err != nil {
		t.Fatal(err)
	}
	g := &Grant{GrantID: 1, Token: 2, Kind: "xid12", Slot: 12_582_913, Lo: 1800000000, Hi: 1800086400}
	g.windowUs()
	if err := s.Enrol(ctx, g, "w"); err != nil {
		t.Fatal(err)
	}
	id, err := s.NextID(ctx, g.LoUs+1_500_000)
	if err != nil {
		t.Fatal(err)
	}
	m := id.Xid.Machine()
	if id.Xid.Pid() != uint16(os.Getpid()) || int(m[0])<<16|int(m[1])<<8|int(m[2]) != g.Slot || id.Xid.Time().Unix() != 1800000001 {
		t.Fatalf("%v: pid %d, machine %x", id.Xid, id.Xid.Pid(), m)
	}
}
