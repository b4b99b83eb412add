package idgen

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The words of the registry's, the generators' and the edge store's errors are not written in
// this package's Go sources: they are the `message` templates of tests/vectors'
// registry_errors.json and edge_traces.json (their `words`), which words.json holds as they are
// there (TestWordsFile checks it, and rewrites it with PG_IDGEN_WRITE_WORDS=1).

//go:embed words.json
var wordsJSON []byte

var words = func() map[string]map[string]string {
	var w map[string]map[string]string
	if err := json.Unmarshal(wordsJSON, &w); err != nil {
		panic("idgen: words.json: " + err.Error())
	}
	return w
}()

// say fills the template name of the file ("registry" or "edge") with values: {name} a text
// as it is, {name:form} the value in the form (at: time.Time to the millisecond; s, s1, s3:
// time.Duration in seconds; int: an integer).
func say(file, name string, values map[string]any) string {
	tpl, ok := words[file][name]
	if !ok {
		panic("idgen: no words " + file + "." + name)
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(tpl, '{')
		if i < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		j := strings.IndexByte(tpl[i:], '}') + i
		b.WriteString(tpl[:i])
		key, form, _ := strings.Cut(tpl[i+1:j], ":")
		b.WriteString(formOf(values[key], form))
		tpl = tpl[j+1:]
	}
}

func formOf(v any, form string) string {
	switch form {
	case "at":
		return v.(time.Time).UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	case "s":
		return strconv.FormatFloat(v.(time.Duration).Seconds(), 'f', -1, 64)
	case "s1":
		return strconv.FormatFloat(v.(time.Duration).Seconds(), 'f', 1, 64)
	case "s3":
		return strconv.FormatFloat(v.(time.Duration).Seconds(), 'f', 3, 64)
	}
	return fmt.Sprint(v)
}
