package idgen

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"
)

type wordEntry struct {
	Name, Class string
	Message     *string
}

func vectorWords(t *testing.T) (map[string]map[string]string, map[string][]wordEntry) {
	var reg, edge struct{ Words []wordEntry }
	load(t, "registry_errors.json", &reg)
	load(t, "edge_traces.json", &edge)
	if len(reg.Words) == 0 || len(edge.Words) == 0 {
		t.Fatal("the vectors have no words")
	}
	out := map[string]map[string]string{"registry": {}, "edge": {}}
	for file, ws := range map[string][]wordEntry{"registry": reg.Words, "edge": edge.Words} {
		for _, w := range ws {
			if w.Message != nil {
				out[file][w.Name] = *w.Message
			}
		}
	}
	return out, map[string][]wordEntry{"registry": reg.Words, "edge": edge.Words}
}

// TestWordsFile: words.json holds the vectors' message templates exactly (PG_IDGEN_WRITE_WORDS=1
// writes it from them).
func TestWordsFile(t *testing.T) {
	want, _ := vectorWords(t)
	if os.Getenv("PG_IDGEN_WRITE_WORDS") == "1" {
		b, _ := json.MarshalIndent(want, "", " ")
		if err := os.WriteFile("words.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !reflect.DeepEqual(words, want) {
		t.Fatal("words.json differs from the vectors' words: PG_IDGEN_WRITE_WORDS=1 go test -run TestWordsFile")
	}
}

// TestWordClasses: every class the words name is an error type of this package.
func TestWordClasses(t *testing.T) {
	types := map[string]bool{}
	for _, e := range []any{RegistryError{}, RegistryUnavailable{}, ClockBeforeWindow{}, ClockAheadOfWindow{},
		EdgeCloned{}, EdgeClockBeforeWindow{}, EdgeWindowEnded{}, EdgeError{}, GrantLost{}} {
		types[reflect.TypeOf(e).Name()] = true
	}
	_, entries := vectorWords(t)
	for _, ws := range entries {
		for _, w := range ws {
			if w.Class != "" && w.Message != nil && !types[w.Class] && w.Name != "server_refusal" && w.Name != "server_refusal_no_detail" {
				t.Errorf("%s: no Go type %s", w.Name, w.Class)
			}
		}
	}
}

// TestWordForms: the placeholders' forms as registry_errors.json's forms give them.
func TestWordForms(t *testing.T) {
	var v struct {
		Forms map[string]struct {
			Message    string
			ExamplesMs [][]any `json:"examples_ms"`
			Examples   [][]any
		}
	}
	load(t, "registry_errors.json", &v)
	if got := formOf(time.UnixMilli(1800000000500), "at"); got != v.Forms["at"].Message {
		t.Errorf("at: %s, want %s", got, v.Forms["at"].Message)
	}
	for _, form := range []string{"s", "s1", "s3"} {
		if len(v.Forms[form].ExamplesMs) == 0 {
			t.Fatalf("no examples of %s", form)
		}
		for _, ex := range v.Forms[form].ExamplesMs {
			ms := num(t, ex[0])
			if got := formOf(time.Duration(ms)*time.Millisecond, form); got != ex[1] {
				t.Errorf("%s of %d ms: %s, want %s", form, ms, got, ex[1])
			}
		}
	}
	for _, ex := range v.Forms["int"].Examples {
		if got := formOf(num(t, ex[0]), "int"); got != ex[1] {
			t.Errorf("int: %s, want %s", got, ex[1])
		}
	}
}

// TestWordsShown: the errors this package makes show the vectors' words.
func TestWordsShown(t *testing.T) {
	s := NewXidGrantState(1, 0, 5)
	_ = s.Bind(7, 1800000000, 1800000060)
	_, err := s.Step(1800000000 - 12)
	want := say("registry", "clock_before_window", map[string]any{"behind": 12 * time.Second,
		"start": time.Unix(1800000000, 0), "kind": "xid12", "slot": 7, "max_wait": 5 * time.Second})
	if err == nil || err.Error() != want {
		t.Fatalf("%v, want %s", err, want)
	}
	if !bytes.Contains([]byte(want), []byte("2027-01-15T08:00:00.000Z (xid12 slot 7)")) {
		t.Errorf("filled in: %s", want)
	}
}
