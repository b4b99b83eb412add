package idgen

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SyncOptions of an edge store's Sync; the zero value renews for 28 days.
type SyncOptions struct {
	// Lease: the renewed window's length from the server's clock, an interval text
	// ("28 days", "1 week"); empty: "28 days" (the chain of 4 × 7 days as one window).
	Lease string
	// Release: report, then release the grant instead of renewing it: its window ends just
	// after the last id (PrepareRelease), the rest of its id-time is free again, and the file
	// holds no grant of this kind after.
	Release bool
}

// EdgeSync is what a Sync did, as the file keeps it after.
type EdgeSync struct {
	Syncs    int64 // the registry's count at this report (the file's syncs)
	HiUs     int64 // the window's end (unix µs): the server's renewed one, or the released one
	Released bool  // the grant was released: the file holds none of this kind
}

// Sync is the device back online (docs/formats.md §10): it reports to the registry
// (idgen_report: this device, the count of its last report, its last id's time, and the
// report's attempt number), then renews the grant for o.Lease from the server's clock, or with
// o.Release releases it (idgen_release with the last id's time); both in one transaction on pg,
// committed; then the count and the window's end (or the grant's removal) are committed to the
// file, and the attempt cleared. The attempt number is stored in the file before the report is
// sent and kept until its reply arrives: when the reply is lost (RegistryUnavailable), the next
// Sync sends the same report again and the registry answers it with the same count.
//
// pg must not be inside a transaction (EdgeError): the store commits its registry calls
// itself. The SQLite writes go through the store's *sql.DB, never through a transaction of
// the caller's (a *sql.Tx of NextIDTx is another connection, which Sync never commits).
//
// Errors: *EdgeCloned (23505; errors.As finds it as *DeviceConflict too) when the registry shows
// this state continued on another device: the file keeps the server's words in its cloned
// column and the store makes no more ids of this grant; the registry's refusals as their types
// (*WrongToken, *GrantLost, *ReportOutsideWindow, ...); *RegistryUnavailable when the server
// could not be reached or its reply was lost; *EdgeError without a grant. ctx bounds the whole call.
func (s *EdgeStore) Sync(ctx context.Context, pg *pgx.Conn, o SyncOptions) (EdgeSync, error) {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if st := pg.PgConn().TxStatus(); st != 'I' {
		return EdgeSync{}, &EdgeError{&RegistryError{Message: say("edge", "postgres_in_transaction", nil)}}
	}
	lease := o.Lease
	if lease == "" {
		lease = "28 days"
	}
	var (
		grantID, token, syncs int64
		lastUs, attempt       sql.NullInt64
	)
	err := s.db.QueryRowContext(ctx, `SELECT grant_id, token, syncs, last_id_us, attempt FROM pg_idgen_edge WHERE kind = ?`, s.kind).
		Scan(&grantID, &token, &syncs, &lastUs, &attempt)
	if errors.Is(err, sql.ErrNoRows) {
		return EdgeSync{}, &EdgeError{&RegistryError{Message: say("edge", "no_grant_to_sync", map[string]any{"kind": s.kind, "device": s.device})}}
	}
	if err != nil {
		return EdgeSync{}, err
	}
	if !attempt.Valid {
		// This report's number, in the file before the report is sent.
		attempt = sql.NullInt64{Int64: attemptNumber(), Valid: true}
		if _, err := s.db.ExecContext(ctx, `UPDATE pg_idgen_edge SET attempt = ? WHERE kind = ?`, attempt.Int64, s.kind); err != nil {
			return EdgeSync{}, err
		}
	}
	var hiUs int64
	if o.Release {
		// Before the server frees the id-time after the last id, the file stops using it; the
		// mark that end was computed from is the one reported.
		if hiUs, lastUs, err = s.prepareRelease(ctx); err != nil {
			return EdgeSync{}, err
		}
	}
	var lastTime any // NULL: no id made
	if lastUs.Valid {
		lastTime = time.UnixMicro(lastUs.Int64).UTC().Format(time.RFC3339Nano)
	}
	var count int64
	err = s.server(ctx, pg, func(tx pgx.Tx, st *statements) error {
		if err := tx.QueryRow(ctx, st.report, pgx.QueryExecModeExec, grantID, token, s.device, syncs, lastTime, attempt.Int64).Scan(&count); err != nil {
			return err
		}
		if o.Release {
			released := lastTime
			if released == nil {
				released = "-infinity" // no id made: the whole window is free
			}
			var id int64
			return tx.QueryRow(ctx, st.release, pgx.QueryExecModeExec, grantID, token, released).Scan(&id)
		}
		g := &Grant{}
		if err := scanGrant(tx.QueryRow(ctx, st.renew, pgx.QueryExecModeExec, grantID, token, lease), g); err != nil {
			return err
		}
		hiUs = g.HiUs
		return nil
	})
	if err != nil {
		return EdgeSync{}, err
	}
	if o.Release {
		_, err = s.db.ExecContext(ctx, `DELETE FROM pg_idgen_edge WHERE kind = ?`, s.kind)
	} else {
		_, err = s.db.ExecContext(ctx, `UPDATE pg_idgen_edge SET syncs = ?, hi_us = ?, attempt = NULL WHERE kind = ?`, count, hiUs, s.kind)
	}
	if err != nil {
		return EdgeSync{}, err
	}
	return EdgeSync{Syncs: count, HiUs: hiUs, Released: o.Release}, nil
}

// attemptNumber: a random number in [1, 2^63).
func attemptNumber() int64 {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic("idgen: crypto/rand: " + err.Error())
		}
		if n := int64(binary.BigEndian.Uint64(b[:]) >> 1); n != 0 {
			return n
		}
	}
}

// server runs calls in one transaction on pg, on the schema the edition rule finds, and
// commits it: server errors as the registry's types, 23505 as *EdgeCloned (kept in the
// file: no more ids), a lost connection or reply as *RegistryUnavailable.
func (s *EdgeStore) server(ctx context.Context, pg *pgx.Conn, calls func(pgx.Tx, *statements) error) error {
	err := func() error {
		tx, err := pg.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		e, err := FindEdition(ctx, tx)
		if err != nil {
			return err
		}
		if err := calls(tx, newStatements(e.Schema)); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}()
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNoExtension) {
		return &RegistryError{Message: err.Error(), Err: err}
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		msg := say("registry", "server_refusal_no_detail", map[string]any{"message": pe.Message})
		if pe.Detail != "" {
			msg = say("edge", "device_conflict", map[string]any{"message": pe.Message, "detail": pe.Detail, "hint": pe.Hint})
		}
		kept := say("edge", "kept", map[string]any{"message": pe.Message, "detail": pe.Detail})
		cloned := &EdgeCloned{&RegistryError{SQLState: pe.Code, Message: msg, Err: pe}}
		if _, ferr := s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE pg_idgen_edge SET cloned = ? WHERE kind = ?`, kept, s.kind); ferr != nil {
			return errors.Join(cloned, fmt.Errorf("the file could not keep it: %w", ferr))
		}
		return cloned
	}
	if m := RegistryErrorOf(err); m != nil {
		return m
	}
	return unavailable(say("registry", "unreachable", map[string]any{"cause": fmt.Sprint(err)}), err)
}
