// Package gocql is a stub of github.com/apache/cassandra-gocql-driver/v2 for the
// analyzer's tests: only what testdata/src/v2driver calls.
package gocql

import "context"

type RetryableQuery interface{ Attempts() int }

type RetryType uint16

type RetryPolicy interface {
	Attempt(RetryableQuery) bool
	GetRetryType(error) RetryType
}

type SimpleRetryPolicy struct{ NumRetries int }

func (*SimpleRetryPolicy) Attempt(RetryableQuery) bool  { return true }
func (*SimpleRetryPolicy) GetRetryType(error) RetryType { return 0 }

type Session struct{}

func (s *Session) Query(stmt string, values ...any) *Query { return &Query{} }

// Batch starts a batch (v2 deprecates NewBatch).
func (s *Session) Batch(typ BatchType) *Batch  { return &Batch{Type: typ} }
func (s *Session) ExecuteBatch(b *Batch) error { return nil }

type Query struct{}

func (q *Query) WithTimestamp(ts int64) *Query    { return q }
func (q *Query) RetryPolicy(r RetryPolicy) *Query { return q }
func (q *Query) Exec() error                      { return nil }

// ExecContext is v2's Exec with a context (Loki's storage client uses only this form).
func (q *Query) ExecContext(ctx context.Context) error { return nil }

type BatchType byte

const LoggedBatch BatchType = 0

type Batch struct{ Type BatchType }

func (b *Batch) Query(stmt string, args ...any) {}
func (b *Batch) WithTimestamp(ts int64) *Batch  { return b }

type UUID [16]byte

func TimeUUID() UUID { return UUID{} }

type ClusterConfig struct{ RetryPolicy RetryPolicy }

func NewCluster(hosts ...string) *ClusterConfig           { return &ClusterConfig{} }
func (c *ClusterConfig) CreateSession() (*Session, error) { return &Session{}, nil }
