// Package scenario holds the integration scenarios that run on both Go drivers: the
// session under test is either driver's, reached through functions; what Cassandra
// holds is read through a gocql v1.7 session straight to the node.
package scenario

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// CountWrites wraps rule: every write request whose text contains one of the keys is
// counted under that key before rule decides (nil rule: forward).
func CountWrites(counts map[string]*atomic.Int64, rule faultproxy.Rule) faultproxy.Rule {
	return func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() {
			for k, c := range counts {
				if strings.Contains(r.CQL, k) {
					c.Add(1)
				}
			}
		}
		if rule == nil {
			return faultproxy.Forward
		}
		return rule(r)
	}
}

// Hedged is the session under test in HedgeNotRepeatable: Raw executes a statement on
// the session without the Policy (to prepare it), Exec through the hedging Policy,
// Hedges is the number of hedges the Policy's tracer heard so far, and Unknown says
// whether an error is the Policy's outcome-unknown error.
type Hedged struct {
	Raw     func(stmt string) error
	Exec    func(ctx context.Context, stmt string, args ...any) error
	Hedges  func() int64
	Unknown func(error) bool
}

// HedgeNotRepeatable: with hedging on and every request slow (the hedge delay long
// past), the response of a counter increment, a list append and an LWT is dropped:
// each is sent exactly once (counted at the proxy px), no hedge is sent, Cassandra
// holds it applied once (read through s0) and the caller gets the outcome-unknown
// error. The positive control, an idempotent INSERT under the same faults, is rescued
// by a hedge well under the session's 1.5 s client timeout. The Policy's hedge delay
// bounds must be [1 ms, 10 ms]; s0 is on the keyspace the session under test uses.
func HedgeNotRepeatable(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, h Hedged) {
	t.Helper()
	for _, st := range []string{`CREATE TABLE hits (id int PRIMARY KEY, n counter)`,
		`CREATE TABLE items (id int PRIMARY KEY, l list<int>)`,
		`CREATE TABLE owners (id int PRIMARY KEY, owner text)`,
		`CREATE TABLE plain (id int PRIMARY KEY, v int)`} {
		if err := s0.Query(st).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s0.AwaitSchemaAgreement(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Warm up: prepare the statements before faults, so the proxy counts executions only.
	for _, st := range []string{`UPDATE hits SET n = n + 1 WHERE id = 0`, `UPDATE items SET l = l + [1] WHERE id = 0`,
		`INSERT INTO owners (id, owner) VALUES (0, 'w') IF NOT EXISTS`, `INSERT INTO plain (id, v) VALUES (0, 0)`} {
		if err := h.Raw(st); err != nil {
			t.Fatal(err)
		}
	}
	// Fill the latency window so the delay is known (and short) before the latency and
	// the faults, with the budget full: under the latency these would all be hedged, lose,
	// and spend the budget, and then nothing below could be hedged — neither the control
	// nor, wrongly, a write that must be sent once (found by review: the checks were
	// vacuous).
	for i := range 64 {
		if err := h.Exec(ctx, `INSERT INTO plain (id, v) VALUES (?, ?)`, 100+i, i); err != nil {
			t.Fatal(err)
		}
	}
	px.SetLatency(30 * time.Millisecond) // each way: every request outlasts the hedge delay
	defer px.SetLatency(0)
	cases := []struct {
		name, key, stmt string
		args            []any
		check           func() (string, bool)
		hedged          bool
	}{
		{"counter increment", "UPDATE hits", `UPDATE hits SET n = n + 1 WHERE id = ?`, []any{1}, func() (string, bool) {
			var c int64
			s0.Query(`SELECT n FROM hits WHERE id = 1`).Scan(&c)
			return fmt.Sprint("n = ", c), c == 1
		}, false},
		{"list append", "UPDATE items", `UPDATE items SET l = l + ? WHERE id = ?`, []any{[]int{7}, 1}, func() (string, bool) {
			var l []int
			s0.Query(`SELECT l FROM items WHERE id = 1`).Scan(&l)
			return fmt.Sprint("l = ", l), len(l) == 1
		}, false},
		{"LWT", "INSERT INTO owners", `INSERT INTO owners (id, owner) VALUES (?, ?) IF NOT EXISTS`, []any{1, "me"}, func() (string, bool) {
			var o string
			s0.Query(`SELECT owner FROM owners WHERE id = 1`).Scan(&o)
			return "owner = " + o, o == "me"
		}, false},
		{"idempotent INSERT (positive control)", "INSERT INTO plain", `INSERT INTO plain (id, v) VALUES (?, ?)`, []any{1, 1}, func() (string, bool) {
			var v int
			s0.Query(`SELECT v FROM plain WHERE id = 1`).Scan(&v)
			return fmt.Sprint("v = ", v), v == 1
		}, true},
	}
	for _, tc := range cases {
		c := new(atomic.Int64)
		px.SetRule(CountWrites(map[string]*atomic.Int64{tc.key: c}, faultproxy.DropNext(1, faultproxy.Writes(tc.key))))
		hedgesBefore := h.Hedges()
		t0 := time.Now()
		err := h.Exec(ctx, tc.stmt, tc.args...)
		took := time.Since(t0)
		px.SetRule(nil)
		state, ok := tc.check()
		sent, hedges := c.Load(), h.Hedges()-hedgesBefore
		t.Logf("%s, response dropped: sent %d time(s), %d hedge(s) in %v, %s, err = %v", tc.name, sent, hedges, took.Round(time.Millisecond), state, err)
		if tc.hedged {
			// Rescued by a hedge, not by a retry after the client timeout.
			if err != nil || sent < 2 || !ok || hedges == 0 || took >= time.Second {
				t.Errorf("%s: sent %d, %d hedges, %v, %s, err %v; want hedged (a hedge, ≥ 2 sends, well under the 1.5 s client timeout), applied, no error",
					tc.name, sent, hedges, took, state, err)
			}
			continue
		}
		if hedges != 0 {
			t.Errorf("%s: %d hedges sent", tc.name, hedges)
		}
		if sent != 1 {
			t.Errorf("%s: sent %d times, want exactly once", tc.name, sent)
		}
		if !ok {
			t.Errorf("%s: Cassandra holds %s, want it applied once", tc.name, state)
		}
		if !h.Unknown(err) {
			t.Errorf("%s: err = %v, want the outcome-unknown error", tc.name, err)
		}
	}
}
