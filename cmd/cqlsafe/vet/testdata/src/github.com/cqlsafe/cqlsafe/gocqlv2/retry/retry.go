// Package retry is a stub of cqlsafe's retry package for the Apache driver v2, for the
// analyzer's tests.
package retry

import (
	"context"

	"github.com/apache/cassandra-gocql-driver/v2"
)

type Option func()
type ExecOption func()

type Policy struct{}

func NewPolicy(opts ...Option) *Policy                                               { return &Policy{} }
func (p *Policy) Attempt(gocql.RetryableQuery) bool                                  { return false }
func (p *Policy) GetRetryType(error) gocql.RetryType                                 { return 0 }
func (p *Policy) Exec(ctx context.Context, q *gocql.Query, opts ...ExecOption) error { return nil }
func (p *Policy) ExecBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch, opts ...ExecOption) error {
	return nil
}

func AtTimestamp(ts int64) ExecOption { return nil }

func Do(ctx context.Context, fn func(ctx context.Context) error, opts ...Option) error {
	return fn(ctx)
}
func Exec(ctx context.Context, q *gocql.Query) error                        { return nil }
func ExecBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch) error { return nil }
