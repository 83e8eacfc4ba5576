package settle

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

// recordingObserver keeps every report with the context it came with.
type recordingObserver struct {
	mu      sync.Mutex
	reports []Report
	ctxs    []context.Context
}

func (o *recordingObserver) Settled(ctx context.Context, r Report) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.reports = append(o.reports, r)
	o.ctxs = append(o.ctxs, ctx)
}

type ctxKey struct{}

// TestSettleObserver: WithObserver hears each Write and LWT call that got past its
// options once, with the caller's context, the kind, the outcome's name, the number of
// statements and the error returned; a call its options reject is not heard of, and
// WithObserver(nil) reports nothing.
func TestSettleObserver(t *testing.T) {
	o := &recordingObserver{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "caller")
	ou := &retry.OutcomeUnknownError{Statements: []retry.Statement{{CQL: `INSERT INTO kv (id) VALUES (?)`}, {CQL: `INSERT INTO kv (id) VALUES (?)`}}}

	_, werr := Write(ctx, nil, ou, WithObserver(o))
	_, lerr := LWT(ctx, nil, retry.Statement{CQL: `INSERT INTO kv (id) VALUES (1) IF NOT EXISTS`}, WithObserver(o))
	//lint:ignore SA1012 a nil context is documented to mean context.Background()
	_, _ = Write(nil, nil, nil, WithObserver(o))
	if werr == nil || lerr == nil {
		t.Fatalf("nil sessions accepted: %v, %v", werr, lerr)
	}
	// Rejected by its options: not heard of. nil: nothing to hear.
	if _, err := Write(ctx, nil, ou, WithObserver(o), At(gocql.Any)); err == nil {
		t.Fatal("consistency ANY accepted")
	}
	if _, err := LWT(ctx, nil, retry.Statement{}, Serial(gocql.SerialConsistency(0x42)), WithObserver(o)); err == nil {
		t.Fatal("bad serial consistency accepted")
	}
	if _, err := LWT(ctx, nil, retry.Statement{}, WithObserver(nil)); err == nil {
		t.Fatal("nil session accepted")
	}

	want := []Report{
		{Kind: "write", Outcome: "unsettleable", Statements: 2, Err: werr},
		{Kind: "lwt", Outcome: "unknown", Statements: 1, Err: lerr},
		{Kind: "write", Outcome: "unsettleable", Statements: 0},
	}
	if len(o.reports) != len(want) {
		t.Fatalf("%d reports, want %d: %+v", len(o.reports), len(want), o.reports)
	}
	for i, w := range want {
		r := o.reports[i]
		if r.Kind != w.Kind || r.Outcome != w.Outcome || r.Statements != w.Statements || r.Elapsed < 0 || r.Err == nil ||
			(w.Err != nil && !errors.Is(r.Err, w.Err)) {
			t.Errorf("report %d: %+v, want %+v", i, r, w)
		}
	}
	if o.ctxs[0].Value(ctxKey{}) != "caller" || o.ctxs[1].Value(ctxKey{}) != "caller" {
		t.Error("the observer did not get the caller's context")
	}
	if o.ctxs[2] == nil {
		t.Error("a nil context reached the observer")
	}
}
