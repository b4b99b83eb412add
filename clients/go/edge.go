package idgen

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/xid"
)

// The offline edge store (docs/formats.md §10) over database/sql on SQLite: the driver is the
// caller's (the tests use mattn/go-sqlite3, Debian's golang-github-mattn-go-sqlite3-dev).

// Edge refusals: no id is made and the row is unchanged.
type (
	// EdgeCloned: the registry found this state on another device (23505 at a Sync, then
	// every NextID of the grant). It unwraps to a *DeviceConflict, which unwraps to the
	// *RegistryError: errors.As finds it as either.
	EdgeCloned struct{ *RegistryError }
	// EdgeClockBeforeWindow: the clock is before the window (offline there is no waiting).
	EdgeClockBeforeWindow struct{ *RegistryError }
	// EdgeWindowEnded: the clock is at or past the window's end, or (UsedUp) the window's
	// ids are used up.
	EdgeWindowEnded struct {
		*RegistryError
		UsedUp bool
	}
)

func (e *EdgeCloned) Unwrap() error            { return &DeviceConflict{e.RegistryError} }
func (e *EdgeClockBeforeWindow) Unwrap() error { return e.RegistryError }
func (e *EdgeWindowEnded) Unwrap() error       { return e.RegistryError }

// EdgeStore keeps one kind's grant and high-water mark in the table pg_idgen_edge.
type EdgeStore struct {
	db     *sql.DB
	kind   string
	device string
	// Pid and Counter give what an id with no mark takes (the process id's low 16 bits, a
	// random counter); xid12 only.
	Pid     func() int
	Counter func() uint32
	syncMu  sync.Mutex // one Sync at a time
}

// EdgeID is an id the store made: Xid for xid12, Snowflake otherwise; IDTimeUs its id-time.
type EdgeID struct {
	Xid       xid.ID
	Snowflake int64
	IDTimeUs  int64
}

// NewEdgeStore creates the table when missing; device names this device in reports and errors.
func NewEdgeStore(ctx context.Context, db *sql.DB, kind, device string) (*EdgeStore, error) {
	if kind != "xid12" && kind != "snowflake" {
		return nil, fmt.Errorf("an edge store's kind is xid12 or snowflake, not %q", kind)
	}
	if _, err := db.ExecContext(ctx, EdgeTable); err != nil {
		return nil, err
	}
	return &EdgeStore{db: db, kind: kind, device: device, Pid: os.Getpid, Counter: randomCounter}, nil
}

// Enrol stores a grant of the edge pool (Registry grants, or a row of idgen_acquire).
func (s *EdgeStore) Enrol(ctx context.Context, g *Grant, writer string) error {
	var epoch any
	if s.kind == "snowflake" {
		epoch = g.EpochMs
	}
	_, err := s.db.ExecContext(ctx, edgeEnrol, s.kind, g.GrantID, g.Token, g.Slot, g.LoUs, g.HiUs, epoch, writer)
	return err
}

type edgeRow struct {
	grantID          int64
	slot, loUs, hiUs int64
	epochMs, lastUs  sql.NullInt64
	lastID           any
	cloned           sql.NullString
}

// NextID makes the next id at nowUs (unix µs) and stores it as the mark, in one transaction.
func (s *EdgeStore) NextID(ctx context.Context, nowUs int64) (EdgeID, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return EdgeID{}, err
	}
	defer func() { _ = tx.Rollback() }()
	id, err := s.NextIDTx(ctx, tx, nowUs)
	if err != nil {
		return EdgeID{}, err
	}
	return id, tx.Commit()
}

// NextIDTx makes the next id in the caller's transaction, so that the row it keys commits
// with the new mark (a device killed mid-batch never repeats a committed id).
func (s *EdgeStore) NextIDTx(ctx context.Context, tx *sql.Tx, nowUs int64) (EdgeID, error) {
	var r edgeRow
	err := tx.QueryRowContext(ctx, `SELECT grant_id, slot, lo_us, hi_us, epoch_ms, last_id, last_id_us, cloned FROM pg_idgen_edge WHERE kind = ?`, s.kind).
		Scan(&r.grantID, &r.slot, &r.loUs, &r.hiUs, &r.epochMs, &r.lastID, &r.lastUs, &r.cloned)
	if errors.Is(err, sql.ErrNoRows) {
		return EdgeID{}, &EdgeError{&RegistryError{Message: say("edge", "no_grant", map[string]any{"kind": s.kind, "device": s.device})}}
	}
	if err != nil {
		return EdgeID{}, err
	}
	id, err := s.rule(r, nowUs)
	if err != nil {
		return EdgeID{}, err
	}
	var stored any = id.Snowflake
	if s.kind == "xid12" {
		stored = id.Xid.String()
	}
	_, err = tx.ExecContext(ctx, `UPDATE pg_idgen_edge SET last_id = ?, last_id_us = ? WHERE kind = ?`, stored, id.IDTimeUs, s.kind)
	return id, err
}

func edgeRefusal(name string, values map[string]any) *RegistryError {
	return &RegistryError{Message: say("edge", name, values)}
}

func (s *EdgeStore) grantWords(r edgeRow) string {
	return say("edge", "grant", map[string]any{"grant_id": r.grantID, "kind": s.kind, "slot": r.slot,
		"lo": time.UnixMicro(r.loUs), "hi": time.UnixMicro(r.hiUs), "device": s.device})
}

// rule is the offline rule (docs/formats.md §10).
func (s *EdgeStore) rule(r edgeRow, nowUs int64) (EdgeID, error) {
	now := time.UnixMicro(nowUs)
	switch {
	case r.cloned.Valid:
		return EdgeID{}, &EdgeCloned{edgeRefusal("cloned", map[string]any{"kept": r.cloned.String})}
	case nowUs < r.loUs:
		return EdgeID{}, &EdgeClockBeforeWindow{edgeRefusal("clock_before_window", map[string]any{"now": now, "grant": s.grantWords(r)})}
	case nowUs >= r.hiUs:
		return EdgeID{}, &EdgeWindowEnded{edgeRefusal("window_ended", map[string]any{"now": now, "grant": s.grantWords(r)}), false}
	}
	var out EdgeID
	if s.kind == "xid12" {
		t := floorDiv(nowUs, 1_000_000)
		if r.lastID == nil {
			out.Xid = xidOf(t, r.slot<<16|int64(s.Pid()&0xffff), s.Counter()&0xffffff)
		} else {
			m, err := ParseXid12(fmt.Sprint(textOf(r.lastID)))
			if err != nil {
				return EdgeID{}, fmt.Errorf("the edge store's mark %v: %w", r.lastID, err)
			}
			sec := int64(m.Time().Unix())
			pid := int64(m.Pid())
			ctr := uint32(m.Counter()+1) & 0xffffff
			if t < sec {
				t = sec
			}
			out.Xid = xidOf(t, r.slot<<16|pid, ctr)
			if bytes.Compare(out.Xid[:], m[:]) <= 0 {
				t = sec + 1
				out.Xid = xidOf(t, r.slot<<16|pid, ctr)
			}
		}
		out.IDTimeUs = int64(out.Xid.Time().Unix()) * 1_000_000
	} else {
		epoch := r.epochMs.Int64
		ms := floorDiv(nowUs, 1000) - epoch
		id := SnowflakeID(ms, int(r.slot), 0)
		if r.lastID != nil {
			m, ok := r.lastID.(int64)
			if !ok {
				return EdgeID{}, fmt.Errorf("the edge store's mark %v is not a snowflake id", r.lastID)
			}
			if id <= m {
				if m&MaxSnowflakeSequence < MaxSnowflakeSequence {
					id = m + 1
				} else {
					id = SnowflakeID(m>>22+1, int(r.slot), 0)
				}
			}
		}
		out.Snowflake = id
		out.IDTimeUs = (epoch + id>>22) * 1000
	}
	if out.IDTimeUs >= r.hiUs {
		return EdgeID{}, &EdgeWindowEnded{edgeRefusal("used_up", map[string]any{"grant": s.grantWords(r), "last": time.UnixMicro(r.lastUs.Int64), "now": now}), true}
	}
	return out, nil
}

// randomCounter: a random 24-bit counter (the first id's, when no mark is kept).
func randomCounter() uint32 {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("idgen: crypto/rand: " + err.Error())
	}
	return binary.BigEndian.Uint32(b[:]) & 0xffffff
}

func textOf(v any) any {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return v
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Renewed stores the server's new end of the window (a renewing sync); the mark stays.
func (s *EdgeStore) Renewed(ctx context.Context, hiUs int64) error {
	_, err := s.db.ExecContext(ctx, `UPDATE pg_idgen_edge SET hi_us = ? WHERE kind = ?`, hiUs, s.kind)
	return err
}

// PrepareRelease stores, before a releasing sync calls idgen_release, the window's end
// min(hi_us, last_id_us + one unit), or min(hi_us, lo_us) when no id was made; returns it.
func (s *EdgeStore) PrepareRelease(ctx context.Context) (int64, error) {
	hi, _, err := s.prepareRelease(ctx)
	return hi, err
}

// prepareRelease: PrepareRelease's end and the mark it was computed from, read in the same
// SQLite transaction (an id another connection makes afterwards stays below that end).
func (s *EdgeStore) prepareRelease(ctx context.Context) (hi int64, lastUs sql.NullInt64, err error) {
	unit := int64(1000)
	if s.kind == "xid12" {
		unit = 1_000_000
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, lastUs, err
	}
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `UPDATE pg_idgen_edge SET hi_us = min(hi_us, coalesce(last_id_us + ?, lo_us)) WHERE kind = ?`, unit, s.kind)
	if err != nil {
		return 0, lastUs, err
	}
	err = tx.QueryRowContext(ctx, `SELECT hi_us, last_id_us FROM pg_idgen_edge WHERE kind = ?`, s.kind).Scan(&hi, &lastUs)
	if err != nil {
		return 0, lastUs, err
	}
	return hi, lastUs, tx.Commit()
}
