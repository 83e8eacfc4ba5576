package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	gocqlv2 "github.com/apache/cassandra-gocql-driver/v2"

	retryv2 "github.com/cqlsafe/cqlsafe/gocqlv2/retry"
)

// execPairV2 is execPair on the Apache Cassandra Go driver v2: gocqlv2/retry's
// Policy.Exec against a raw v2 Exec with a client timestamp, on a v2 session of its own
// (the driver's default protocol version; one connection per host, as the v1 session).
func execPairV2(ctx context.Context, e *env, closers *[]func()) (*pair, error) {
	if err := e.exec(ctx, `CREATE TABLE kv2 (id bigint PRIMARY KEY, v text, n int)`); err != nil {
		return nil, err
	}
	cl := gocqlv2.NewCluster(e.node.Hosts()...)
	cl.Keyspace = e.ks
	cl.Timeout = 15 * time.Second
	cl.ConnectTimeout = 15 * time.Second
	cl.Consistency = gocqlv2.Quorum
	cl.NumConns = 1
	cl.DisableInitialHostLookup = true // one node, reached at the address it was given
	s, err := cl.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("v2 session: %w", err)
	}
	*closers = append(*closers, s.Close)
	const insert = `INSERT INTO kv2 (id, v, n) VALUES (?, ?, ?)`
	pol := retryv2.NewPolicy()
	var seq atomic.Int64
	return &pair{key: "exec_vs_raw_v2", title: "`gocqlv2/retry.Policy.Exec` of an idempotent INSERT vs raw Apache driver v2 Exec with a client timestamp", n: e.n(10_000, 400), flush: e.flush,
		targets: []target{
			{"throughput ≥ 0.98× raw Exec", func(r result) bool { return spreadOf(r.ratios()).median >= 0.98 }},
			{"client allocations ≤ raw's + 4", func(r result) bool { return r.allocExtra() <= 4 }},
		},
		a: side{name: "Policy.Exec (v2)", workers: e.workers, prepare: func(context.Context, int, int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			return func(ctx context.Context, _ int) error {
				return pol.Exec(ctx, s.Query(insert, seq.Add(1), "value-0123456789", 7))
			}, nil, nil
		}},
		b: side{name: "raw Exec (v2)", workers: e.workers, prepare: func(context.Context, int, int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			return func(ctx context.Context, _ int) error {
				return s.Query(insert, seq.Add(1), "value-0123456789", 7).
					Idempotent(true).WithTimestamp(pol.Clock().Next()).ExecContext(ctx)
			}, nil, nil
		}},
	}, nil
}
