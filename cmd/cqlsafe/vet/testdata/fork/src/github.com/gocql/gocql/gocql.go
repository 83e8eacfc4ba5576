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
