// Command interop is the Go client's part of the cross-client interop check
// (tests/interop/run.sh): `interop make DIR` writes DIR/go.ids (rs/xid's xid.New(); Snowflake ids
// of worker 5 built by SnowflakeID from the clock, as this client has no Snowflake generator
// without a grant); `interop read DIR` reads every DIR/*.ids and writes DIR/go.read
// (tests/interop/README.md).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	idgen "github.com/pg-idgen/pg_idgen/clients/go"
	"github.com/rs/xid"
)

const n = 300

func main() {
	if len(os.Args) != 3 {
		fail(fmt.Errorf("usage: interop make|read DIR"))
	}
	var err error
	switch os.Args[1] {
	case "make":
		err = makeIDs(os.Args[2])
	case "read":
		err = read(os.Args[2])
	default:
		err = fmt.Errorf("usage: interop make|read DIR (not %s)", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "interop:", err)
	os.Exit(1)
}

func makeIDs(dir string) error {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "x %s\n", xid.New())
	}
	ms := time.Now().UnixMilli() - idgen.DefaultSnowflakeEpochMs
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "s %d\n", idgen.SnowflakeID(ms, 5, i))
	}
	return os.WriteFile(filepath.Join(dir, "go.ids"), []byte(b.String()), 0o644)
}

func read(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.ids"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	var xids []xid.ID
	var flakes []int64
	var out strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			kind, value, _ := strings.Cut(line, " ")
			if kind == "x" {
				x, err := xid.FromString(value)
				if err != nil {
					return err
				}
				m := x.Machine()
				machine := int(m[0])<<16 | int(m[1])<<8 | int(m[2])
				fmt.Fprintf(&out, "x %s %d %d %d %d\n", x, x.Time().Unix(), machine, x.Pid(), x.Counter())
				xids = append(xids, x)
				continue
			}
			s, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				return err
			}
			d, err := idgen.DecodeSnowflake(s, idgen.DefaultSnowflakeEpochMs)
			if err != nil {
				return err
			}
			fmt.Fprintf(&out, "s %d %d %d %d\n", s, d.UnixMs, d.Worker, d.Sequence)
			flakes = append(flakes, s)
		}
	}
	sort.Slice(xids, func(i, j int) bool { return xids[i].Compare(xids[j]) < 0 })
	sort.Slice(flakes, func(i, j int) bool { return flakes[i] < flakes[j] })
	for _, x := range xids {
		fmt.Fprintf(&out, "ox %s\n", x)
	}
	for _, s := range flakes {
		fmt.Fprintf(&out, "os %d\n", s)
	}
	return os.WriteFile(filepath.Join(dir, "go.read"), []byte(out.String()), 0o644)
}
