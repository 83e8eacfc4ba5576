package harness

import (
	"time"

	"github.com/gocql/gocql"
)

// NaiveRetry is the negative control of every retry test: a gocql.RetryPolicy that
// re-sends anything — counters, list appends, unpinned writes — up to Retries times on
// the same host, after Pause (so another client's write can land in between). It is
// what gocql v1.7.0 does once any retry policy is set, whatever the statement's
// idempotence. Tests use it to show the fault they inject really breaks a careless
// client; never use it for real work.
type NaiveRetry struct {
	Retries int           // re-sends after the first attempt (0: 3)
	Pause   time.Duration // wait before each re-send
}

// Attempt implements gocql.RetryPolicy.
func (n NaiveRetry) Attempt(q gocql.RetryableQuery) bool {
	time.Sleep(n.Pause)
	r := n.Retries
	if r == 0 {
		r = 3
	}
	return q.Attempts() <= r
}

// GetRetryType implements gocql.RetryPolicy: always the same host.
func (NaiveRetry) GetRetryType(error) gocql.RetryType { return gocql.Retry }
