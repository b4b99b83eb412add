package idgen

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/rs/xid"
)

// Xid12Codec is a pgx v5 codec for the native xid12 type: xid.ID (and *xid.ID) in binary, 12
// bytes on the wire (docs/formats.md §1), and in text, 20 base32hex characters (§2). Scans
// into *xid.ID, **xid.ID and *string. A zero xid.ID binds as NULL and NULL scans as the zero
// xid.ID, rs/xid's own rule (its Value and Scan). RegisterXid12 installs it on a connection.
type Xid12Codec struct{}

// FormatSupported: binary and text.
func (Xid12Codec) FormatSupported(format int16) bool {
	return format == pgtype.BinaryFormatCode || format == pgtype.TextFormatCode
}

// PreferredFormat is binary: 12 bytes instead of 20 characters, no base32 to decode.
func (Xid12Codec) PreferredFormat() int16 { return pgtype.BinaryFormatCode }

type xidEncodePlan struct{ text bool }

func (p xidEncodePlan) Encode(value any, buf []byte) ([]byte, error) {
	var id xid.ID
	switch v := value.(type) {
	case xid.ID:
		id = v
	case *xid.ID:
		if v == nil {
			return nil, nil
		}
		id = *v
	default:
		return nil, fmt.Errorf("xid12: cannot encode %T", value)
	}
	if id.IsNil() {
		return nil, nil
	}
	if p.text {
		out := append(buf, make([]byte, 20)...)
		id.Encode(out[len(buf):])
		return out, nil
	}
	return append(buf, id[:]...), nil
}

// PlanEncode: xid.ID and *xid.ID; other values go to pgx's fallbacks (a string binds as text).
func (Xid12Codec) PlanEncode(_ *pgtype.Map, _ uint32, format int16, value any) pgtype.EncodePlan {
	switch value.(type) {
	case xid.ID, *xid.ID:
		if format == pgtype.TextFormatCode {
			return xidEncodePlan{text: true}
		}
		return xidEncodePlan{}
	}
	return nil
}

// ErrXid12Wire is wrapped by every error decoding an xid12 value the server sent.
var ErrXid12Wire = errors.New("xid12: not an xid12 value")

func decodeXid12(format int16, src []byte) (xid.ID, error) {
	if format == pgtype.BinaryFormatCode {
		if len(src) != 12 {
			return xid.ID{}, fmt.Errorf("%w: binary xid12 is 12 bytes, got %d", ErrXid12Wire, len(src))
		}
		var id xid.ID
		copy(id[:], src)
		return id, nil
	}
	id, err := ParseXid12(string(src))
	if err != nil {
		return xid.ID{}, fmt.Errorf("%w: %v", ErrXid12Wire, err)
	}
	return id, nil
}

type xidScanPlan struct{ format int16 }

func (p xidScanPlan) Scan(src []byte, target any) error {
	switch t := target.(type) {
	case *xid.ID:
		if src == nil {
			*t = xid.NilID()
			return nil
		}
		id, err := decodeXid12(p.format, src)
		if err != nil {
			return err
		}
		*t = id
	case **xid.ID:
		if src == nil {
			*t = nil
			return nil
		}
		id, err := decodeXid12(p.format, src)
		if err != nil {
			return err
		}
		*t = &id
	case *string:
		if src == nil {
			return fmt.Errorf("xid12: cannot scan NULL into *string")
		}
		id, err := decodeXid12(p.format, src)
		if err != nil {
			return err
		}
		*t = id.String()
	default:
		return fmt.Errorf("xid12: cannot scan into %T", target)
	}
	return nil
}

// PlanScan: *xid.ID, **xid.ID, *string.
func (Xid12Codec) PlanScan(_ *pgtype.Map, _ uint32, format int16, target any) pgtype.ScanPlan {
	switch target.(type) {
	case *xid.ID, **xid.ID, *string:
		return xidScanPlan{format: format}
	}
	return nil
}

// DecodeDatabaseSQLValue gives the text, as database/sql expects of a driver.
func (Xid12Codec) DecodeDatabaseSQLValue(_ *pgtype.Map, _ uint32, format int16, src []byte) (driver.Value, error) {
	if src == nil {
		return nil, nil
	}
	id, err := decodeXid12(format, src)
	if err != nil {
		return nil, err
	}
	return id.String(), nil
}

// DecodeValue gives an xid.ID (nil for NULL).
func (Xid12Codec) DecodeValue(_ *pgtype.Map, _ uint32, format int16, src []byte) (any, error) {
	if src == nil {
		return nil, nil
	}
	return decodeXid12(format, src)
}

// ParseXid12 reads an xid12's text as the server does (docs/formats.md §2): exactly 20
// characters of the base32hex alphabet, in either case, the last one 0 or g.
func ParseXid12(text string) (xid.ID, error) {
	if len(text) != 20 {
		return xid.ID{}, fmt.Errorf("an xid12 is 20 base32hex characters; the text has %d", len([]rune(text)))
	}
	b := []byte(text)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'V':
			b[i] = c + 32
		case c >= '0' && c <= '9', c >= 'a' && c <= 'v':
		default:
			return xid.ID{}, fmt.Errorf("%q is not a base32hex character", c)
		}
	}
	if last := b[19]; last != '0' && last != 'g' {
		return xid.ID{}, errors.New("the last character of an xid12 is 0 or g")
	}
	return xid.FromString(string(b))
}

// Edition is what a database has of pg_idgen, found by tests/vectors/edition_rule.sql's rule.
type Edition struct {
	Name       string // "native" or "portable"
	Schema     string // where its functions and xid12 type live
	Xid12OID   uint32
	Xid12Array uint32
}

// FindEdition runs the edition rule on conn. A database without pg_idgen gives ErrNoExtension.
func FindEdition(ctx context.Context, conn interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (Edition, error) {
	var e Edition
	var oid, arr int32
	err := conn.QueryRow(ctx, editionQuery, pgx.QueryExecModeExec).Scan(&e.Name, &oid, &arr, &e.Schema)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, ErrNoExtension
	}
	e.Xid12OID, e.Xid12Array = uint32(oid), uint32(arr)
	return e, err
}

// ErrNoExtension: the database has neither the extension nor the portable edition.
var ErrNoExtension = errors.New(say("registry", "not_installed", nil))

// RegisterXid12 finds xid12 by its name through the edition rule and registers Xid12Codec for
// it (and its array type) on conn's type map. The portable edition's xid12 is a domain over
// text, which the server sends as text: nothing to register, xid.ID's own Value and Scan serve.
// Use it as a pgxpool.Config's AfterConnect.
func RegisterXid12(ctx context.Context, conn *pgx.Conn) error {
	e, err := FindEdition(ctx, conn)
	if err != nil {
		return err
	}
	if e.Name != "native" {
		return nil
	}
	m := conn.TypeMap()
	t := &pgtype.Type{Name: "xid12", OID: e.Xid12OID, Codec: Xid12Codec{}}
	m.RegisterType(t)
	if e.Xid12Array != 0 {
		m.RegisterType(&pgtype.Type{Name: "_xid12", OID: e.Xid12Array, Codec: &pgtype.ArrayCodec{ElementType: t}})
	}
	return nil
}
