package decision_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// serverErr stands in for a driver's typed server error.
type serverErr struct {
	code      int
	writeType string
}

func (e serverErr) Error() string { return fmt.Sprintf("server error %#x", e.code) }

var errNoResponse = errors.New("driver: no response")

// driver is a driver adapter's Driver for these tests.
var driver = decision.Driver{Server: serverFacts, NoResponse: errNoResponse}

func serverFacts(err error) (decision.Facts, bool) {
	var se serverErr
	if errors.As(err, &se) {
		return decision.Facts{Class: decision.CodeClass(se.code), BatchLogged: se.writeType == "BATCH",
			CDC: se.code == decision.CodeCDCWriteFailure || se.writeType == "CDC"}, true
	}
	return decision.Facts{}, false
}

func TestDecisionClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want decision.ErrorClass
	}{
		{nil, decision.ClassNone},
		{context.Canceled, decision.ClassCanceled},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), decision.ClassCanceled},
		{serverErr{code: decision.CodeUnavailable}, decision.ClassUnavailable},
		{serverErr{code: decision.CodeCASWriteUnknown}, decision.ClassWriteTimeout},
		{serverErr{code: 0x2000}, decision.ClassFatal}, // syntax
		{errNoResponse, decision.ClassClientTimeout},
		{io.EOF, decision.ClassConnection},
		{syscall.ECONNREFUSED, decision.ClassNoHost},
		{errors.New("something else"), decision.ClassFatal},
	} {
		if got := decision.Classify(tc.err, driver).Class; got != tc.want {
			t.Errorf("Classify(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestDecisionTable: the decision table of Decide, row by row.
func TestDecisionTable(t *testing.T) {
	ins := verdict.Classify("INSERT INTO t (id, v) VALUES (?, ?)")
	counter := verdict.Classify("UPDATE c SET n = n + 1 WHERE id = ?")
	multi := verdict.Batch([]verdict.Verdict{counter, counter}, nil, nil, true, false)
	logged := verdict.Batch([]verdict.Verdict{ins, ins}, nil, nil, false, true)
	facts := func(err error) decision.Facts { return decision.Classify(err, driver) }
	for _, tc := range []struct {
		name    string
		ctxDone bool
		err     error
		v       verdict.Verdict
		pinned  bool
		tries   int
		want    bool
		reason  decision.Reason
	}{
		{"unavailable, counter: nothing applied", false, serverErr{code: decision.CodeUnavailable}, counter, true, 1, true, ""},
		{"overloaded, counter batch of two: the first may have applied", false, serverErr{code: decision.CodeOverloaded}, multi, true, 1, false, decision.ReasonNotIdempotent},
		{"unavailable, logged batch: checked before the batch log", false, serverErr{code: decision.CodeUnavailable}, logged, true, 1, true, ""},
		{"write timeout BATCH: in the batch log", false, serverErr{code: decision.CodeWriteTimeout, writeType: "BATCH"}, logged, true, 1, false, decision.ReasonBatchLogged},
		{"write timeout BATCH_LOG, repeatable", false, serverErr{code: decision.CodeWriteTimeout, writeType: "BATCH_LOG"}, logged, true, 1, true, ""},
		{"write timeout, counter", false, serverErr{code: decision.CodeWriteTimeout, writeType: "COUNTER"}, counter, true, 1, false, decision.ReasonNotIdempotent},
		{"write timeout, insert, not pinned", false, serverErr{code: decision.CodeWriteTimeout, writeType: "SIMPLE"}, ins, false, 1, false, decision.ReasonNotPinned},
		{"write timeout, insert, pinned", false, serverErr{code: decision.CodeWriteTimeout, writeType: "SIMPLE"}, ins, true, 1, true, ""},
		{"write timeout CDC", false, serverErr{code: decision.CodeWriteTimeout, writeType: "CDC"}, ins, true, 1, false, decision.ReasonNotRetryable},
		{"lost response, attempts exhausted", false, errNoResponse, ins, true, 3, false, decision.ReasonAttemptsExhausted},
		{"context done", true, errNoResponse, ins, true, 1, false, decision.ReasonContextDone},
		{"syntax error", false, serverErr{code: 0x2000}, ins, true, 1, false, decision.ReasonNotRetryable},
	} {
		got, reason := decision.Decide(tc.ctxDone, facts(tc.err), tc.v, tc.pinned, tc.tries, 3)
		if got != tc.want || reason != tc.reason {
			t.Errorf("%s: retry %v (%q), want %v (%q)", tc.name, got, reason, tc.want, tc.reason)
		}
	}
}

func TestDecisionNextHost(t *testing.T) {
	if !decision.NextHost(decision.Facts{Class: decision.ClassOverloaded}, false) {
		t.Error("overloaded: another coordinator is what helps")
	}
	if decision.NextHost(decision.Facts{Class: decision.ClassClientTimeout}, false) || !decision.NextHost(decision.Facts{Class: decision.ClassClientTimeout}, true) {
		t.Error("a lost response goes to another host only when asked")
	}
}

// TestDecisionConditional: for an LWT only what stops the Paxos round before it begins
// proves nothing was applied — Unavailable at SERIAL/LOCAL_SERIAL, Bootstrapping, no
// connection. Unavailable at the commit consistency and Overloaded can come after the
// proposal was accepted (legacy Paxos's commitPaxos): never re-sent, outcome unknown.
func TestDecisionConditional(t *testing.T) {
	lwt := verdict.Classify("UPDATE t SET l = l + ['x'] WHERE id = 1 IF v = 'base'")
	if !lwt.Conditional {
		t.Fatal("verdict: not conditional")
	}
	for _, tc := range []struct {
		name  string
		f     decision.Facts
		retry bool
	}{
		{"Unavailable at QUORUM", decision.Facts{Class: decision.ClassUnavailable}, false},
		{"Overloaded", decision.Facts{Class: decision.ClassOverloaded}, false},
		{"Unavailable at SERIAL", decision.Facts{Class: decision.ClassUnavailable, Serial: true}, true},
		{"Bootstrapping", decision.Facts{Class: decision.ClassBootstrapping}, true},
		{"no connection", decision.Facts{Class: decision.ClassNoHost}, true},
		{"write timeout", decision.Facts{Class: decision.ClassWriteTimeout}, false},
	} {
		got, _ := decision.Decide(false, tc.f, lwt, true, 1, 3)
		if got != tc.retry {
			t.Errorf("%s: retry %v, want %v", tc.name, got, tc.retry)
		}
		if may := decision.AttemptMayHaveApplied(tc.f, lwt); may == tc.retry {
			t.Errorf("%s: may have applied %v, want %v", tc.name, may, !tc.retry)
		}
		if may := decision.ConditionalMayHaveApplied(tc.f); may == tc.retry {
			t.Errorf("%s: ConditionalMayHaveApplied %v, want %v", tc.name, may, !tc.retry)
		}
	}
	// The same errors on a plain write still prove nothing applied.
	ins := verdict.Classify("INSERT INTO t (id, v) VALUES (?, ?)")
	for _, c := range []decision.ErrorClass{decision.ClassUnavailable, decision.ClassOverloaded} {
		if !decision.ProvesNothingApplied(decision.Facts{Class: c}, ins) {
			t.Errorf("%v on a plain INSERT: want nothing applied", c)
		}
	}
	if !decision.SerialConsistency(0x0008) || !decision.SerialConsistency(0x0009) || decision.SerialConsistency(0x0004) {
		t.Error("SerialConsistency: SERIAL and LOCAL_SERIAL only")
	}
}

// TestDecisionNoConnectionBatch: a driver that found no connection sent nothing —
// for a batch or an IN list as for one statement (issue 42, item 10: a batch was
// reported as an unknown outcome, a single statement as not applied).
func TestDecisionNoConnectionBatch(t *testing.T) {
	ins := verdict.Classify("INSERT INTO t (id, v) VALUES (?, ?)")
	for _, v := range []verdict.Verdict{
		verdict.Batch([]verdict.Verdict{ins, ins}, nil, nil, false, false),
		verdict.Batch([]verdict.Verdict{ins, ins}, nil, nil, false, true),
		verdict.Classify("DELETE FROM t WHERE id IN (1, 2)"),
	} {
		f := decision.Facts{Class: decision.ClassNoHost}
		if !decision.ProvesNothingApplied(f, v) || decision.AttemptMayHaveApplied(f, v) {
			t.Errorf("no connection, %+v: nothing applied %v, may have applied %v; want nothing applied",
				v, decision.ProvesNothingApplied(f, v), decision.AttemptMayHaveApplied(f, v))
		}
	}
}
