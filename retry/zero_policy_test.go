package retry

import (
	"errors"
	"fmt"
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
