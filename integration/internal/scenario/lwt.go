package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// Policy is a driver's retry.Policy as the scenarios use it: Raw runs one statement on
// its session without it (a driver retry policy that never retries), Exec through it, Unknown says whether an error is its outcome-unknown error and whether
// that error says the write was conditional (settle.LWT tells what happened).
type Policy struct {
	Raw     func(stmt string, args ...any) error // the session, without the Policy
	Exec    func(ctx context.Context, stmt string, args ...any) error
	Unknown func(err error) (unknown, conditional bool)
	// NoConnection: err is the driver's "no connection to send on" (ErrNoConnections).
	NoConnection func(err error) bool
}

// ConditionalAfterRefusal: a conditional write (LWT) answered by Unavailable or
// Overloaded after Cassandra applied it. With legacy Paxos (the 4.1/5.0 default)
// StorageProxy.commitPaxos builds the commit's replica plan (Unavailable at the commit
// consistency) and checks hint overload (Overloaded) after the proposal was accepted,
// and the next round completes it: such an error proves nothing. The write must not be
// re-sent — the list keeps one element, the caller gets the outcome-unknown error — and
// an Unavailable at SERIAL, which Paxos raises only before the round begins, still
// lets the Policy re-send: the write lands once and the caller gets nil. s0 reads
// Cassandra directly, on the keyspace p writes to; px is p's session's proxy.
func ConditionalAfterRefusal(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, p Policy) {
	t.Helper()
	if err := s0.Query(`CREATE TABLE lwt_refused (id int PRIMARY KEY, v text, l list<text>)`).Exec(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const appendIf = `UPDATE lwt_refused SET l = l + ['x'] WHERE id = ? IF v = 'base'`
	const insertIfNot = `INSERT INTO lwt_refused (id, v) VALUES (?, 'new') IF NOT EXISTS`
	isLWT := func(r faultproxy.Request) bool {
		return r.IsWrite() && strings.Contains(r.CQL, "lwt_refused") && strings.Contains(r.CQL, " IF ")
	}
	list := func(id int) []string {
		var l []string
		if err := s0.Query(`SELECT l FROM lwt_refused WHERE id = ?`, id).Scan(&l); err != nil {
			t.Fatalf("read id %d: %v", id, err)
		}
		return l
	}
	exists := func(id int) bool {
		n := 0
		if err := s0.Query(`SELECT COUNT(*) FROM lwt_refused WHERE id = ?`, id).Scan(&n); err != nil {
			t.Fatalf("count id %d: %v", id, err)
		}
		return n == 1
	}
	base := func(id int) {
		if err := s0.Query(`INSERT INTO lwt_refused (id, v) VALUES (?, 'base')`, id).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	// Prepared once, fault-free: a fault must not hide an UNPREPARED from the driver.
	base(0)
	px.SetRule(nil)
	for _, st := range []string{appendIf, insertIfNot} {
		if err := p.Exec(ctx, st, 0); err != nil {
			t.Fatalf("warm-up %q: %v", st, err)
		}
	}
	for i, c := range []struct {
		name   string
		action faultproxy.Action
	}{
		{"Unavailable at QUORUM after applying", faultproxy.ForwardThenReply(faultproxy.Unavailable())},
		{"Overloaded after applying", faultproxy.ForwardThenReply(faultproxy.Overloaded())},
		{"Unavailable at LOCAL_QUORUM after applying", faultproxy.ForwardThenReply(faultproxy.UnavailableAt(faultproxy.LocalQuorum))},
	} {
		id := 10 + i
		base(id)
		px.SetRule(faultproxy.Next(1, isLWT, c.action))
		err := p.Exec(ctx, appendIf, id)
		unknown, conditional := p.Unknown(err)
		if !unknown || !conditional {
			t.Errorf("conditional append, %s: err = %v; want the outcome-unknown error of a conditional write", c.name, err)
		}
		if l := list(id); !slices.Equal(l, []string{"x"}) {
			t.Errorf("conditional append, %s: Cassandra holds l = %v, want [x] (applied once, never re-sent)", c.name, l)
		}
		id += 100
		px.SetRule(faultproxy.Next(1, isLWT, c.action))
		err = p.Exec(ctx, insertIfNot, id)
		if unknown, conditional := p.Unknown(err); !unknown || !conditional {
			t.Errorf("INSERT IF NOT EXISTS, %s: err = %v; want the outcome-unknown error of a conditional write (the row exists)", c.name, err)
		}
		if !exists(id) {
			t.Errorf("INSERT IF NOT EXISTS, %s: the row is missing; the proxy forwarded it", c.name)
		}
	}
	// Before the round began: Unavailable at SERIAL or LOCAL_SERIAL (Paxos's prepare
	// plan), Bootstrapping. The proxy answers for Cassandra: nothing was applied, and the
	// Policy may send it again (Bootstrapping goes to another host, and there is none
	// here): either it lands once and the caller gets nil, or the caller gets a plain
	// error and nothing is applied.
	for i, f := range []faultproxy.ErrorFrame{faultproxy.UnavailableAt(faultproxy.Serial), faultproxy.UnavailableAt(faultproxy.LocalSerial), faultproxy.IsBootstrapping()} {
		id := 30 + i
		base(id)
		px.SetRule(faultproxy.Next(1, isLWT, faultproxy.Reply(f)))
		err := p.Exec(ctx, appendIf, id)
		l := list(id)
		switch unknown, _ := p.Unknown(err); {
		case unknown:
			t.Errorf("conditional append refused before the round (%s, consistency %#x): %v; want nil or a plain error (nothing was applied)", f.Message, f.Consistency, err)
		case err == nil && !slices.Equal(l, []string{"x"}):
			t.Errorf("conditional append refused before the round (%s): nil error, Cassandra holds %v; want [x]", f.Message, l)
		case err != nil && len(l) != 0:
			t.Errorf("conditional append refused before the round (%s): %v, Cassandra holds %v; want nothing applied", f.Message, err, l)
		case err != nil && f.Code == faultproxy.CodeUnavailable:
			t.Errorf("conditional append refused at %#x before the round: %v; want it re-sent on the same host", f.Consistency, err)
		}
	}
	// The negative control: the same fault under a policy that trusts Unavailable (what
	// main did) re-sends, and the condition still holds the second time.
	id := 40
	base(id)
	px.SetRule(faultproxy.Next(1, isLWT, faultproxy.ForwardThenReply(faultproxy.Unavailable())))
	if err := p.Raw(appendIf, id); err == nil {
		t.Fatal("control: the proxy's Unavailable did not reach the raw session")
	}
	px.SetRule(nil)
	if err := p.Raw(appendIf, id); err != nil {
		t.Fatal(err)
	}
	if l := list(id); len(l) != 2 {
		t.Errorf("control: a blind re-send after Unavailable left %v; want [x x], the harm the Policy avoids", l)
	} else {
		t.Logf("control: a blind re-send left %v", fmt.Sprint(l))
	}
}
