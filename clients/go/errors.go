package idgen

import (
	"errors"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// RegistryError is an error of the writer registry or of a generator bound to one of its
// grants. Every condition has its own type, which embeds *RegistryError and unwraps to it:
// errors.As(err, &fenced) with fenced a *RegistryFenced tells one condition, errors.As(err, &re)
// with re a *RegistryError any of them.
type RegistryError struct {
	SQLState string // the server's SQLSTATE when the server raised it
	Message  string // the message, then ": " and the DETAIL when there is one
	Err      error  // the cause (a *pgconn.PgError, a network error), or nil
}

func (e *RegistryError) Error() string { return e.Message }
func (e *RegistryError) Unwrap() error { return e.Err }

// The conditions (docs/formats.md §11; tests/vectors/registry_errors.json).
type (
	// RegistryFenced is IG001: after a change of origin the registry grants nothing of this
	// kind in this pool until Until (zero when the message names no moment).
	RegistryFenced struct {
		*RegistryError
		Until time.Time
	}
	// PoolNotAllowed is IG002: the role may not take grants in this pool.
	PoolNotAllowed struct{ *RegistryError }
	// CapReached is IG003: the role holds its cap of live grants in this pool.
	CapReached struct{ *RegistryError }
	// LeaseTooLong is IG004: the lease is longer than the pool allows for this kind.
	LeaseTooLong struct{ *RegistryError }
	// EpochChanged is IG005: pg_idgen.snowflake_epoch differs from the registry's grants'.
	EpochChanged struct{ *RegistryError }
	// ReportOutsideWindow is IG006: an edge device reported an id outside its window.
	ReportOutsideWindow struct{ *RegistryError }
	// GrantLost is 55000 or 42704: acquire a new grant (the generators do).
	GrantLost struct{ *RegistryError }
	// WrongToken is 42501: a wrong token, another role's grant, or a reservation.
	WrongToken struct{ *RegistryError }
	// SlotsExhausted is 53400: every slot of the pool for this kind is held.
	SlotsExhausted struct{ *RegistryError }
	// DeviceConflict is 23505: one grant is used by two edge devices.
	DeviceConflict struct{ *RegistryError }
	// RegistryUnavailable: the registry could not be reached in time, or at the window's end
	// no renewed window came within the bound.
	RegistryUnavailable struct{ *RegistryError }
	// ClockBeforeWindow: the clock is further before the grant's window than a writer waits.
	ClockBeforeWindow struct{ *RegistryError }
	// ClockAheadOfWindow: the clock is past the window's end even just after a renewal (more
	// than a lease ahead of the server's).
	ClockAheadOfWindow struct{ *RegistryError }
	// EdgeError: the edge store cannot do what was asked (no grant enrolled, ...).
	EdgeError struct{ *RegistryError }
	// ClockMovedBack: the clock stepped back behind the last Snowflake id by more than a
	// writer waits out.
	ClockMovedBack struct{ *RegistryError }
)

func (e *RegistryFenced) Unwrap() error      { return e.RegistryError }
func (e *PoolNotAllowed) Unwrap() error      { return e.RegistryError }
func (e *CapReached) Unwrap() error          { return e.RegistryError }
func (e *LeaseTooLong) Unwrap() error        { return e.RegistryError }
func (e *EpochChanged) Unwrap() error        { return e.RegistryError }
func (e *ReportOutsideWindow) Unwrap() error { return e.RegistryError }
func (e *GrantLost) Unwrap() error           { return e.RegistryError }
func (e *WrongToken) Unwrap() error          { return e.RegistryError }
func (e *SlotsExhausted) Unwrap() error      { return e.RegistryError }
func (e *DeviceConflict) Unwrap() error      { return e.RegistryError }
func (e *RegistryUnavailable) Unwrap() error { return e.RegistryError }
func (e *ClockBeforeWindow) Unwrap() error   { return e.RegistryError }
func (e *ClockAheadOfWindow) Unwrap() error  { return e.RegistryError }
func (e *ClockMovedBack) Unwrap() error      { return e.RegistryError }
func (e *EdgeError) Unwrap() error           { return e.RegistryError }

// registryConditions: the type of each SQLSTATE the registry raises; another code is a plain
// *RegistryError.
var registryConditions = map[string]func(*RegistryError) error{
	"IG001": func(b *RegistryError) error { return &RegistryFenced{b, fencedUntil(b.Err)} },
	"IG002": func(b *RegistryError) error { return &PoolNotAllowed{b} },
	"IG003": func(b *RegistryError) error { return &CapReached{b} },
	"IG004": func(b *RegistryError) error { return &LeaseTooLong{b} },
	"IG005": func(b *RegistryError) error { return &EpochChanged{b} },
	"IG006": func(b *RegistryError) error { return &ReportOutsideWindow{b} },
	"55000": func(b *RegistryError) error { return &GrantLost{b} },
	"42704": func(b *RegistryError) error { return &GrantLost{b} },
	"42501": func(b *RegistryError) error { return &WrongToken{b} },
	"53400": func(b *RegistryError) error { return &SlotsExhausted{b} },
	"23505": func(b *RegistryError) error { return &DeviceConflict{b} },
}

// RegistryErrorOf maps a server error to its condition's type (the message, then ": " and the
// DETAIL, in the words of registry_errors.json); nil when err is no server error or a connection one (08xxx, 57Pxx).
func RegistryErrorOf(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || len(pe.Code) != 5 || pe.Code[:2] == "08" || pe.Code[:3] == "57P" {
		return nil
	}
	msg := say("registry", "server_refusal_no_detail", map[string]any{"message": pe.Message})
	if pe.Detail != "" {
		msg = say("registry", "server_refusal", map[string]any{"message": pe.Message, "detail": pe.Detail})
	}
	if pe.Code == "42703" && strings.Contains(pe.Message, "lo_t") {
		// idgen_grant's lo_t, hi_t and server_t are new in 0.7.0.
		return &RegistryError{SQLState: pe.Code, Message: say("registry", "needs_0_7_0", map[string]any{"message": pe.Message}), Err: pe}
	}
	base := &RegistryError{SQLState: pe.Code, Message: msg, Err: pe}
	if mk, ok := registryConditions[pe.Code]; ok {
		return mk(base)
	}
	return base
}

var untilPattern = regexp.MustCompile(` until (\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z)$`)

// FencedUntil is the moment an IG001 message ends with, or the zero time.
func FencedUntil(message string) time.Time {
	m := untilPattern.FindStringSubmatch(message)
	if m == nil {
		return time.Time{}
	}
	t, err := time.Parse("2006-01-02T15:04:05.000000Z", m[1])
	if err != nil {
		return time.Time{}
	}
	return t
}

func fencedUntil(err error) time.Time {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return FencedUntil(pe.Message)
	}
	return time.Time{}
}

func unavailable(msg string, cause error) error {
	return &RegistryUnavailable{&RegistryError{Message: msg, Err: cause}}
}
