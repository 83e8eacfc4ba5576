package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	gocqlv2 "github.com/apache/cassandra-gocql-driver/v2"

	overwritev2 "github.com/cqlsafe/cqlsafe/gocqlv2/overwrite"
	retryv2 "github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

// v2Session is a v2 session on the benchmark's keyspace (the driver's default protocol
// version; one connection per host, as the v1 session).
func v2Session(e *env, closers *[]func()) (*gocqlv2.Session, error) {
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
	return s, nil
}

// overwritePairV2 is overwrite_vs_floor on the v2 driver: gocqlv2/overwrite.Row (20 of
// t40's 40 columns) against the same unlogged DELETE at N + INSERT at N+1 batch built
// by hand with the v2 driver (the statements the table builds, every absent column
// UNSET), on a v2 session. t40 is overwritePairs' table.
func overwritePairV2(ctx context.Context, e *env, closers *[]func()) (*pair, error) {
	s, err := v2Session(e, closers)
	if err != nil {
		return nil, err
	}
	tbl, err := overwritev2.Describe(ctx, s, e.ks, "t40")
	if err != nil {
		return nil, err
	}
	pol := retryv2.NewPolicy()
	var insCols []string
	for _, c := range tbl.Columns() {
		insCols = append(insCols, c.Name)
	}
	del := tbl.DeleteRow()
	ins := tbl.Insert(table.UsingTTL | table.UsingTimestamp)
	return &pair{key: "overwrite_vs_floor_v2", title: "`gocqlv2/overwrite.Row` vs the physical floor on the v2 driver: a hand-built unlogged batch of the same DELETE at N + INSERT at N+1", n: e.n(10_000, 400), flush: e.flush,
		targets: []target{
			{"throughput ≥ 1.00× the floor", func(r result) bool { return spreadOf(r.ratios()).median >= 1.00 }},
			{"client allocations ≤ the floor's + 4", func(r result) bool { return r.allocExtra() <= 4 }},
		},
		a: side{name: "overwrite.Row (v2)", workers: e.workers, prepare: func(_ context.Context, r, n int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			rows := make([]map[string]any, n) // built before the clock starts: only the client's work is measured
			for i := range rows {
				rows[i] = wideRow(partition(r, 3, i))
			}
			return func(ctx context.Context, i int) error {
				_, err := overwritev2.Row(ctx, s, tbl, rows[i], overwritev2.WithRetryPolicy(pol))
				return err
			}, nil, nil
		}},
		b: side{name: "raw DELETE N + INSERT N+1 batch (v2)", workers: e.workers, prepare: func(_ context.Context, r, n int) (func(context.Context, int) error, func(context.Context) (string, error), error) {
			type input struct {
				key  [2]any
				vals []any
			}
			in := make([]input, n)
			for i := range in {
				row := wideRow(partition(r, 4, i))
				vals := make([]any, 0, len(insCols)+2)
				for _, c := range insCols {
					if v, ok := row[c]; ok {
						vals = append(vals, v)
					} else {
						vals = append(vals, gocqlv2.UnsetValue)
					}
				}
				in[i] = input{key: [2]any{row["id"], row["seq"]}, vals: append(vals, gocqlv2.UnsetValue, nil)}
			}
			return func(ctx context.Context, i int) error {
				n := pol.Clock().Reserve(2)
				vals := in[i].vals
				vals[len(vals)-1] = n + 1
				b := s.Batch(gocqlv2.UnloggedBatch)
				b.Entries = make([]gocqlv2.BatchEntry, 0, 2)
				b.Query(del, n, in[i].key[0], in[i].key[1])
				b.Query(ins, vals...)
				b.WithTimestamp(n + 1)
				return b.ExecContext(ctx)
			}, nil, nil
		}},
	}, nil
}

// execPairV2 is execPair on the Apache Cassandra Go driver v2: gocqlv2/retry's
// Policy.Exec against a raw v2 Exec with a client timestamp, on a v2 session of its own
// (the driver's default protocol version; one connection per host, as the v1 session).
func execPairV2(ctx context.Context, e *env, closers *[]func()) (*pair, error) {
	if err := e.exec(ctx, `CREATE TABLE kv2 (id bigint PRIMARY KEY, v text, n int)`); err != nil {
		return nil, err
	}
	s, err := v2Session(e, closers)
	if err != nil {
		return nil, err
	}
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
