package idgen

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/rs/xid"
)

// The shared vectors (tests/vectors), read where the repository has them.
func vectorsDir(t *testing.T) string {
	if d := os.Getenv("PG_IDGEN_VECTORS"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "tests", "vectors")
}

func load(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, err := v.(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestXid12Vectors(t *testing.T) {
	var v struct {
		Valid []struct {
			Input, Text, Bytes, Machine string
			UnixSeconds                 int64 `json:"unix_seconds"`
			Pid, Counter                int
		}
		InvalidText  []struct{ Text string }  `json:"invalid_text"`
		InvalidBytes []struct{ Bytes string } `json:"invalid_bytes"`
	}
	load(t, "xid12.json", &v)
	codec := Xid12Codec{}
	for _, c := range v.Valid {
		id, err := ParseXid12(c.Input)
		if err != nil {
			t.Fatalf("%q: %v", c.Input, err)
		}
		raw, _ := hex.DecodeString(c.Bytes)
		if !bytes.Equal(id[:], raw) || id.String() != c.Text {
			t.Errorf("%q: %x %s, want %s %s", c.Input, id[:], id, c.Bytes, c.Text)
		}
		if id.Time().Unix() != c.UnixSeconds || hex.EncodeToString(id.Machine()) != c.Machine || int(id.Pid()) != c.Pid || int(id.Counter()) != c.Counter {
			t.Errorf("%s: parts %d %x %d %d", c.Text, id.Time().Unix(), id.Machine(), id.Pid(), id.Counter())
		}
		// The codec both ways, in binary (12 bytes) and text.
		for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
			wire, err := codec.PlanEncode(nil, 0, format, id).Encode(id, nil)
			if err != nil {
				t.Fatal(err)
			}
			if id.IsNil() { // rs/xid's rule: the zero id binds as NULL (checked below)
				wire = raw
				if format == pgtype.TextFormatCode {
					wire = []byte(c.Text)
				}
			}
			if format == pgtype.BinaryFormatCode && !bytes.Equal(wire, raw) || format == pgtype.TextFormatCode && string(wire) != c.Text {
				t.Errorf("%s: format %d sends %q", c.Text, format, wire)
			}
			var back xid.ID
			if err := codec.PlanScan(nil, 0, format, &back).Scan(wire, &back); err != nil || back != id {
				t.Errorf("%s: format %d reads back %s (%v)", c.Text, format, back, err)
			}
		}
	}
	for _, c := range v.InvalidText {
		if _, err := ParseXid12(c.Text); err == nil {
			t.Errorf("%q was accepted", c.Text)
		}
		var id xid.ID
		if err := codec.PlanScan(nil, 0, pgtype.TextFormatCode, &id).Scan([]byte(c.Text), &id); !errors.Is(err, ErrXid12Wire) {
			t.Errorf("text %q scanned: %v", c.Text, err)
		}
	}
	for _, c := range v.InvalidBytes {
		raw, _ := hex.DecodeString(c.Bytes)
		var id xid.ID
		if err := codec.PlanScan(nil, 0, pgtype.BinaryFormatCode, &id).Scan(raw, &id); !errors.Is(err, ErrXid12Wire) {
			t.Errorf("bytes %q scanned: %v", c.Bytes, err)
		}
	}
	// rs/xid's rule: the zero id binds as NULL.
	if wire, _ := codec.PlanEncode(nil, 0, pgtype.BinaryFormatCode, xid.NilID()).Encode(xid.NilID(), nil); wire != nil {
		t.Errorf("the zero id binds as %x, not NULL", wire)
	}
}

func TestRapkeyVectors(t *testing.T) {
	var v struct {
		Valid         []struct{ Body, Check, Key string }
		InvalidBodies []struct{ Body string } `json:"invalid_bodies"`
		InvalidKeys   []struct{ Key string }  `json:"invalid_keys"`
		Normalize     []struct{ Input, Key, Message string }
		Build         []struct {
			Type     string
			Segments []string
			Key      string
		}
		PrefixRange []struct {
			Prefix string
			Range  []string
		} `json:"prefix_range"`
	}
	load(t, "rapkey.json", &v)
	for _, c := range v.Valid {
		ch, err := RapkeyCheckChar(c.Body)
		if err != nil || string(ch) != c.Check {
			t.Errorf("%s: check %q (%v), want %s", c.Body, ch, err, c.Check)
		}
		if k, err := ParseRapkey(c.Key); err != nil || k.Body() != c.Body {
			t.Errorf("%s: %v", c.Key, err)
		}
		parts := strings.Split(c.Body, ".")
		if k, err := BuildRapkey(parts[0], parts[1:]...); err != nil || string(k) != c.Key {
			t.Errorf("build %s: %s %v", c.Body, k, err)
		}
	}
	for _, c := range v.InvalidBodies {
		if _, err := RapkeyCheckChar(c.Body); !errors.Is(err, ErrInvalidRapkey) {
			t.Errorf("body %q accepted", c.Body)
		}
	}
	for _, c := range v.InvalidKeys {
		if _, err := ParseRapkey(c.Key); !errors.Is(err, ErrInvalidRapkey) {
			t.Errorf("key %q accepted", c.Key)
		}
	}
	for _, c := range v.Normalize {
		k, err := ToRapkey(c.Input)
		if (c.Key != "") != (err == nil) || string(k) != c.Key {
			t.Errorf("to_rapkey(%q) = %q, %v; want %q", c.Input, k, err, c.Key)
		}
	}
	for _, c := range v.Build {
		k, err := BuildRapkey(c.Type, c.Segments...)
		if (c.Key != "") != (err == nil) || string(k) != c.Key {
			t.Errorf("build(%q, %q) = %q, %v; want %q", c.Type, c.Segments, k, err, c.Key)
		}
	}
	for _, c := range v.PrefixRange {
		lo, hi, err := RapkeyPrefixRange(c.Prefix)
		if c.Range == nil {
			if err == nil {
				t.Errorf("prefix %q accepted", c.Prefix)
			}
		} else if err != nil || lo != c.Range[0] || hi != c.Range[1] {
			t.Errorf("prefix %q: [%q, %q) %v, want %q", c.Prefix, lo, hi, err, c.Range)
		}
	}
}

func TestSnowflakeVectors(t *testing.T) {
	var v struct {
		Epoch   string
		Layouts []map[string]any
		Invalid []map[string]any `json:"invalid_ids"`
	}
	load(t, "snowflake.json", &v)
	epoch := num(t, json.Number(v.Epoch))
	if epoch != DefaultSnowflakeEpochMs {
		t.Fatalf("epoch %d", epoch)
	}
	for _, c := range v.Layouts {
		s, err := DecodeSnowflake(num(t, c["id"]), epoch)
		if err != nil || s.MsSinceEpoch != num(t, c["ms_since_epoch"]) || s.UnixMs != num(t, c["unix_ms"]) ||
			int64(s.Worker) != num(t, c["worker"]) || int64(s.Sequence) != num(t, c["sequence"]) {
			t.Errorf("%v: %+v %v", c["id"], s, err)
		}
		if SnowflakeID(s.MsSinceEpoch, s.Worker, s.Sequence) != num(t, c["id"]) {
			t.Errorf("%v does not build back", c["id"])
		}
	}
	for _, c := range v.Invalid {
		if _, err := DecodeSnowflake(num(t, c["id"]), epoch); err == nil || err.Error() != c["message"] {
			t.Errorf("%v: %v, want %v", c["id"], err, c["message"])
		}
	}
}

func TestGrantTraces(t *testing.T) {
	var v struct {
		Cases []struct {
			Name, Kind string
			Slot       int
			Lo, Hi     int64
			MaxWait    int64 `json:"max_wait"`
			EpochMs    int64 `json:"epoch_ms"`
			Pid        int
			Steps      []map[string]any
		}
	}
	load(t, "grant_traces.json", &v)
	if len(v.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range v.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var sf *SnowflakeGrantState
			var xs *XidGrantState
			slot, lo, hi := c.Slot, c.Lo, c.Hi
			bind := func() {
				var err error
				if sf != nil {
					err = sf.Bind(slot, lo, hi)
				} else {
					err = xs.Bind(slot, lo, hi)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if c.Kind == "snowflake" {
				sf = NewSnowflakeGrantState(c.EpochMs, c.MaxWait)
			} else {
				xs = NewXidGrantState(c.Pid, 0, c.MaxWait)
			}
			bind()
			var lastSf int64 = -1
			var lastX xid.ID
			made := false
			for i, step := range c.Steps {
				if rb, ok := step["rebind"].(map[string]any); ok {
					slot, lo, hi = int(num(t, rb["slot"])), num(t, rb["lo"]), num(t, rb["hi"])
					bind()
					continue
				}
				repeat := int64(1)
				if r, ok := step["repeat"]; ok {
					repeat = num(t, r)
				}
				now := num(t, step["now"])
				var got Step
				var err error
				var idText string
				for k := int64(0); k < repeat; k++ {
					if xs != nil {
						xs.Counter = uint32((num(t, step["counter"]) + k) % (1 << 24))
					}
					if sf != nil {
						got, err = sf.Step(now)
					} else {
						got, err = xs.Step(now)
					}
					if k < repeat-1 && (err != nil || got != StepID) {
						t.Fatalf("step %d call %d made no id: %v %v", i, k, got, err)
					}
					if err == nil && got == StepID {
						// Every id: the slot, inside the window, above every id before.
						if sf != nil {
							d, _ := DecodeSnowflake(sf.ID, c.EpochMs)
							if d.Worker != slot || d.MsSinceEpoch < lo || d.MsSinceEpoch >= hi || (made && sf.ID <= lastSf) {
								t.Fatalf("step %d: id %d breaks the rule (slot %d, [%d, %d), last %d)", i, sf.ID, slot, lo, hi, lastSf)
							}
							lastSf, idText = sf.ID, strconv.FormatInt(sf.ID, 10)
						} else {
							m := xs.ID.Machine()
							ts := int64(xs.ID.Time().Unix())
							if int(m[0])<<16|int(m[1])<<8|int(m[2]) != slot || ts < lo || ts >= hi || (made && bytes.Compare(xs.ID[:], lastX[:]) <= 0) {
								t.Fatalf("step %d: id %x breaks the rule", i, xs.ID[:])
							}
							lastX, idText = xs.ID, hex.EncodeToString(xs.ID[:])
						}
						made = true
					}
				}
				want := step["expect"].(map[string]any)
				switch {
				case want["id"] != nil:
					if err != nil || got != StepID || idText != strings.Trim(string(mustJSON(want["id"])), `"`) {
						t.Fatalf("step %d: %v %v %s, want id %v", i, got, err, idText, want["id"])
					}
				case want["wait_until"] != nil:
					wu := int64(-1)
					if sf != nil {
						wu = sf.WaitUntil
					} else {
						wu = xs.WaitUntil
					}
					if err != nil || got != StepWait || wu != num(t, want["wait_until"]) {
						t.Fatalf("step %d: %v %v %d, want wait until %v", i, got, err, wu, want["wait_until"])
					}
				case want["renew"] != nil:
					if err != nil || got != StepRenew {
						t.Fatalf("step %d: %v %v, want renew", i, got, err)
					}
				case want["error"] == "clock_before_window":
					var e *ClockBeforeWindow
					if !errors.As(err, &e) {
						t.Fatalf("step %d: %v %v, want ClockBeforeWindow", i, got, err)
					}
				case want["error"] == "clock_moved_back":
					var e *ClockMovedBack
					if !errors.As(err, &e) {
						t.Fatalf("step %d: %v %v, want ClockMovedBack", i, got, err)
					}
				default:
					t.Fatalf("step %d: unknown expectation %v", i, want)
				}
			}
		})
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func TestRegistryErrorVectors(t *testing.T) {
	var v struct {
		Conditions []struct{ Condition, Sqlstate, Class string }
		Fenced     []struct {
			Message string
			Until   *string
		} `json:"fenced_messages"`
	}
	load(t, "registry_errors.json", &v)
	seen := map[string]bool{}
	for _, c := range v.Conditions {
		err := RegistryErrorOf(&pgconn.PgError{Code: c.Sqlstate, Message: "m", Detail: "d"})
		typ := reflect.TypeOf(err)
		if typ.Kind() != reflect.Pointer || typ.Elem().Name() != c.Class {
			t.Errorf("%s (%s) is %v, want %s", c.Sqlstate, c.Condition, typ, c.Class)
		}
		var re *RegistryError
		if !errors.As(err, &re) || re.SQLState != c.Sqlstate || re.Message != say("registry", "server_refusal", map[string]any{"message": "m", "detail": "d"}) {
			t.Errorf("%s: not a RegistryError with its code and message: %v", c.Sqlstate, err)
		}
		seen[c.Sqlstate] = true
	}
	for code := range registryConditions {
		if !seen[code] {
			t.Errorf("%s is mapped but not in registry_errors.json", code)
		}
	}
	// Another code is a plain RegistryError; a connection problem none.
	if _, ok := RegistryErrorOf(&pgconn.PgError{Code: "22023"}).(*RegistryError); !ok {
		t.Error("22023 is not a plain RegistryError")
	}
	if RegistryErrorOf(&pgconn.PgError{Code: "08006"}) != nil {
		t.Error("08006 is taken for a registry refusal")
	}
	for _, f := range v.Fenced {
		err := RegistryErrorOf(&pgconn.PgError{Code: "IG001", Message: f.Message})
		var fenced *RegistryFenced
		if !errors.As(err, &fenced) {
			t.Fatalf("IG001 is %T", err)
		}
		if f.Until == nil {
			if !fenced.Until.IsZero() {
				t.Errorf("%q gives %v", f.Message, fenced.Until)
			}
			continue
		}
		want, _ := time.Parse(time.RFC3339Nano, *f.Until)
		if !fenced.Until.Equal(want) {
			t.Errorf("%q gives %v, want %v", f.Message, fenced.Until, want)
		}
	}
}

func TestEditionRule(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(vectorsDir(t), "edition_rule.sql"))
	if err != nil {
		t.Fatal(err)
	}
	rule := string(b)
	rule = strings.TrimRight(rule[strings.Index(rule, "WITH c AS ("):], "\n")
	if !strings.HasPrefix(editionQuery, rule) {
		t.Error("editionQuery does not start with tests/vectors/edition_rule.sql's rule")
	}
}
