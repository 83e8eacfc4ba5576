// Package gocql is a stub of the ScyllaDB fork (which replaces github.com/gocql/gocql):
// its HostInfo has ScyllaShardAwarePort.
package gocql

type HostInfo struct{}

func (h *HostInfo) ScyllaShardAwarePort() uint16 { return 0 }

type Session struct{}

type Query struct{}

func (s *Session) Query(stmt string, values ...interface{}) *Query { return &Query{} }
func (q *Query) Exec() error                                       { return nil }
func (q *Query) Consistency(c uint16) *Query                       { return q }
func (q *Query) WithTimestamp(ts int64) *Query                     { return q }

type BatchType byte

const (
	LoggedBatch   BatchType = 0
	UnloggedBatch BatchType = 1
	CounterBatch  BatchType = 2
)

type RetryPolicy interface{}

type SimpleRetryPolicy struct{ NumRetries int }

// Batch.Query returns the batch on the fork.
type Batch struct{ Type BatchType }

func (s *Session) NewBatch(typ BatchType) *Batch               { return &Batch{Type: typ} }
func (s *Session) ExecuteBatch(b *Batch) error                 { return nil }
func (b *Batch) Query(stmt string, args ...interface{}) *Batch { return b }
func (b *Batch) WithTimestamp(ts int64) *Batch                 { return b }
func (b *Batch) RetryPolicy(r RetryPolicy) *Batch              { return b }
func (b *Batch) Exec() error                                   { return nil }
