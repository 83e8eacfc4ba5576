package cqlvalue

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gocql/gocql"
)

// forkQueryError is the shape of the ScyllaDB fork's QueryError: the per-host error
// wrapped with whether an earlier attempt may have run.
type forkQueryError struct{ err error }

func (e *forkQueryError) Error() string { return e.err.Error() + " (potentially executed: true)" }
func (e *forkQueryError) Unwrap() error { return e.err }

func TestNoConnection(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{gocql.ErrNoConnections, true},
		{fmt.Errorf("exec: %w", gocql.ErrNoConnections), true},
		{&forkQueryError{errors.New("gocql: host pool does not have connections")}, true},
		{&forkQueryError{errors.New("gocql: host is nil or down")}, true},
		{fmt.Errorf("query is targeting host id x that driver is not connected to: %w", errors.New("gocql: host does not have a pool")), true},
		{errors.Join(errors.New("other"), &forkQueryError{errors.New("gocql: host pool does not have connections")}), true},
		{&forkQueryError{gocql.ErrTimeoutNoResponse}, false},
		{errors.New("gocql: host pool does not have connections, almost"), false},
		{nil, false},
	} {
		if got := NoConnection(c.err); got != c.want {
			t.Errorf("NoConnection(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
