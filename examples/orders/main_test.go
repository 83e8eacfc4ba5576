package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/schema"
)

// TestParseFlags: bad flags are usage errors before anything connects.
func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--hosts", "127.0.0.1:9042", "--address-map", "127.0.0.11=127.0.0.21:19042,::1=127.0.0.1:19043"})
	if err != nil || c.addressMap["127.0.0.11"] != "127.0.0.21:19042" || c.addressMap["::1"] != "127.0.0.1:19043" {
		t.Fatalf("good flags: %+v, %v", c, err)
	}
	for _, bad := range [][]string{
		{"--timeout", "0s"},
		{"--keyspace", ""},
		{"--replication-factor", "0"},
		{"--address-map", "127.0.0.11"},
		{"--address-map", "127.0.0.11=localhost:9042"},
		{"--address-map", "node1=127.0.0.1:9042"},
		{"--address-map", "127.0.0.11=127.0.0.1:0"},
		{"--address-map", "127.0.0.11=127.0.0.21:19042,127.0.0.11=127.0.0.22:19042"},
		// Two nodes at one IP: one going down would take both out of gocql's query plan.
		{"--address-map", "127.0.0.11=127.0.0.1:19042,127.0.0.12=127.0.0.1:19043"},
		{"stray"},
	} {
		if _, err := parseFlags(bad); err == nil {
			t.Errorf("%s: accepted", strings.Join(bad, " "))
		}
	}
}

// TestUntilStarted: start-up outlasts what Cassandra gets over (a DDL timed out while a
// node restarts: the nemesis run's CI failure of 2026-11-26), not what it never will.
func TestUntilStarted(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	by := time.Now().Add(time.Minute)
	for _, c := range []struct {
		name  string
		errs  []error // what each try returns; nil after the last
		tries int
		ok    bool
	}{
		{"timeout, then done", []error{fmt.Errorf("schema: CREATE TABLE: %w", gocql.ErrTimeoutNoResponse)}, 2, true},
		{"no agreement, then done", []error{fmt.Errorf("%w: versions differ", schema.ErrNoAgreement)}, 2, true},
		{"unavailable twice", []error{&gocql.RequestErrUnavailable{}, &gocql.RequestErrUnavailable{}}, 3, true},
		{"syntax error", []error{errors.New("line 1: no viable alternative")}, 1, false},
	} {
		tries := 0
		err := untilStarted(ctx, by, log, c.name, func(context.Context) error {
			tries++
			if tries <= len(c.errs) {
				return c.errs[tries-1]
			}
			return nil
		})
		if (err == nil) != c.ok || tries != c.tries {
			t.Errorf("%s: %d tries, err %v; want %d tries, ok %v", c.name, tries, err, c.tries, c.ok)
		}
	}
	// Past its time, start-up gives the last error up.
	tries := 0
	err := untilStarted(ctx, time.Now().Add(100*time.Millisecond), log, "late", func(context.Context) error {
		tries++
		return gocql.ErrTimeoutNoResponse
	})
	if !errors.Is(err, gocql.ErrTimeoutNoResponse) || tries != 1 {
		t.Errorf("past the start-up time: %d tries, err %v", tries, err)
	}
}
