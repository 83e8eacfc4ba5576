package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// Before ca3a63f a zero Policy judged statements (classify used the Policy's own
// sync.Map) and, set on a cluster, never retried; now p.eng is nil.
func TestZeroPolicyDoesNotPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"Repeatable":   func() { (&Policy{}).Repeatable("ks", "SELECT * FROM t", nil) },
		"GetRetryType": func() { (&Policy{}).GetRetryType(gocql.ErrTimeoutNoResponse) },
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("zero Policy %s: panic %v (a zero Policy judged and refused before the engine moved out)", name, r)
				}
			}()
			f()
		}()
	}
}

func TestOutcomeUnknownErrorAsAndIs(t *testing.T) {
	var err error = fmt.Errorf("w: %w", &OutcomeUnknownError{Err: gocql.ErrTimeoutNoResponse})
	var ou *OutcomeUnknownError
	if !errors.As(err, &ou) || !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatal("errors.As/Is broken")
	}
	t.Logf("%%T is now %T", ou)
}

// TestZeroPolicyExecRefuses: Exec and ExecBatch on a Policy not made by NewPolicy send
// nothing and say so (a nil query or batch is refused first either way).
func TestZeroPolicyExecRefuses(t *testing.T) {
	if err := (&Policy{}).Exec(context.Background(), &gocql.Query{}); err == nil || !strings.Contains(err.Error(), "NewPolicy") {
		t.Errorf("Exec on a zero Policy: %v", err)
	}
	if err := (&Policy{}).ExecBatch(context.Background(), &gocql.Session{}, &gocql.Batch{}); err == nil || !strings.Contains(err.Error(), "NewPolicy") {
		t.Errorf("ExecBatch on a zero Policy: %v", err)
	}
}
