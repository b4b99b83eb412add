package idgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestRegistryUnansweredIsBounded: a server that accepts and never answers; acquiring fails
// with RegistryUnavailable, in the no_answer words, after Timeout and not much later.
func TestRegistryUnansweredIsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx := context.Background()
	const timeout = 300 * time.Millisecond
	reg, err := Open(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=u dbname=d sslmode=disable", ln.Addr().(*net.TCPAddr).Port),
		Options{Writer: "unanswered", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = reg.Snowflake(ctx, GrantOptions{})
	took := time.Since(began)
	var un *RegistryUnavailable
	if !errors.As(err, &un) {
		t.Fatalf("%v (%T), want RegistryUnavailable", err, err)
	}
	if want := say("registry", "no_answer", map[string]any{"timeout": timeout}); un.Message != want {
		t.Errorf("%q, want %q", un.Message, want)
	}
	if took < timeout || took > timeout+2*time.Second {
		t.Errorf("took %s with a timeout of %s", took, timeout)
	}
	began = time.Now()
	_ = reg.Close(ctx)
	if took := time.Since(began); took > timeout+time.Second {
		t.Errorf("Close took %s", took)
	}
}
