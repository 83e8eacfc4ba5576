// Package gocql is a stub of github.com/gocql/gocql for the analyzer's tests.
package gocql

import (
	"context"
	"time"
)

type UUID [16]byte

func TimeUUID() UUID                { return UUID{} }
func RandomUUID() (UUID, error)     { return UUID{}, nil }
func UUIDFromTime(t time.Time) UUID { return UUID{} }

type unsetColumn struct{}

var UnsetValue = unsetColumn{}

type Consistency uint16

const Quorum Consistency = 4

type RetryableQuery interface{ Attempts() int }
type RetryType uint16

type RetryPolicy interface {
	Attempt(RetryableQuery) bool
	GetRetryType(error) RetryType
}

type SimpleRetryPolicy struct{ NumRetries int }

func (*SimpleRetryPolicy) Attempt(RetryableQuery) bool  { return true }
func (*SimpleRetryPolicy) GetRetryType(error) RetryType { return 0 }

type ExponentialBackoffRetryPolicy struct {
	NumRetries int
	Min, Max   time.Duration
}

func (*ExponentialBackoffRetryPolicy) Attempt(RetryableQuery) bool  { return true }
func (*ExponentialBackoffRetryPolicy) GetRetryType(error) RetryType { return 0 }

type ClusterConfig struct {
	Hosts       []string
	Keyspace    string
	RetryPolicy RetryPolicy
}

func NewCluster(hosts ...string) *ClusterConfig             { return &ClusterConfig{Hosts: hosts} }
func (cfg *ClusterConfig) CreateSession() (*Session, error) { return &Session{}, nil }

type Session struct{}

type QueryInfo struct{}

func (s *Session) Query(stmt string, values ...interface{}) *Query { return &Query{} }
func (s *Session) QueryWithContext(ctx context.Context, stmt string, values ...interface{}) *Query {
	return &Query{}
}
func (s *Session) Bind(stmt string, b func(q *QueryInfo) ([]interface{}, error)) *Query {
	return &Query{}
}
func (s *Session) NewBatch(typ BatchType) *Batch { return &Batch{Type: typ} }
func (s *Session) ExecuteBatch(b *Batch) error   { return nil }
func (s *Session) ExecuteBatchCAS(b *Batch, dest ...interface{}) (bool, *Iter, error) {
	return false, nil, nil
}
func (s *Session) MapExecuteBatchCAS(b *Batch, dest map[string]interface{}) (bool, *Iter, error) {
	return false, nil, nil
}

type Iter struct{}

func (it *Iter) Close() error { return nil }

type Query struct{}

func (q *Query) WithTimestamp(ts int64) *Query                        { return q }
func (q *Query) WithContext(ctx context.Context) *Query               { return q }
func (q *Query) Consistency(c Consistency) *Query                     { return q }
func (q *Query) RetryPolicy(r RetryPolicy) *Query                     { return q }
func (q *Query) Idempotent(v bool) *Query                             { return q }
func (q *Query) Bind(v ...interface{}) *Query                         { return q }
func (q *Query) Exec() error                                          { return nil }
func (q *Query) Scan(dest ...interface{}) error                       { return nil }
func (q *Query) ScanCAS(dest ...interface{}) (bool, error)            { return false, nil }
func (q *Query) MapScanCAS(dest map[string]interface{}) (bool, error) { return false, nil }
func (q *Query) Iter() *Iter                                          { return &Iter{} }

type BatchType byte

const (
	LoggedBatch   BatchType = 0
	UnloggedBatch BatchType = 1
	CounterBatch  BatchType = 2
)

type BatchEntry struct {
	Stmt string
	Args []interface{}
}

type Batch struct {
	Type    BatchType
	Entries []BatchEntry
}

func NewBatch(typ BatchType) *Batch                     { return &Batch{Type: typ} }
func (b *Batch) Query(stmt string, args ...interface{}) {}
func (b *Batch) WithTimestamp(ts int64) *Batch          { return b }
func (b *Batch) WithContext(ctx context.Context) *Batch { return b }
func (b *Batch) RetryPolicy(r RetryPolicy) *Batch       { return b }
func (b *Batch) SetConsistency(c Consistency)           {}
