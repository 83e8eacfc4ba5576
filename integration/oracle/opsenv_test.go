package oracle

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gocqlv2 "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/clientid"
	overwritev2 "github.com/cqlsafe/cqlsafe/gocqlv2/overwrite"
	retryv2 "github.com/cqlsafe/cqlsafe/gocqlv2/retry"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/outbox"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

// opClientTimeout is the client-side timeout of the sessions that go through the fault
// proxy: a dropped response becomes a client timeout after it, and the library retries.
const opClientTimeout = 300 * time.Millisecond

// Tables of the operations oracle besides the generated ones.
const (
	eventsTable    = "events"     // the eventlog template, no TTL
	eventsTTLTable = "events_ttl" // the eventlog template with a default TTL
	tombTable      = "tombstones" // the tombstones template
)

// opsEnv is what every operation case shares: the keyspace, the generated tables and
// their twins, described for the library.
type opsEnv struct {
	s      *gocql.Session // direct: setup and reads
	ks     string
	tables []*table // generated, counters included
	plain  []*table // tables every operation can handle: no UDT, tuple or vector columns
	ow     map[string]*overwrite.Table
	owErr  map[string]error  // Describe's error (counter tables)
	v2     map[string]*table // keymigrate target of each table: k is text
	bf     map[string]*table // keymigrate backfill source of each table (same DDL, own rows)
	bfMu   map[string]*sync.Mutex
	// weights: the operations generated and how often (opWeights unless a run says).
	weights []opWeight
	// ow2: the tables described by gocqlv2/overwrite, for a run on the v2 driver (nil:
	// every operation runs on gocql v1.7).
	ow2 map[string]*overwritev2.Table
}

// useV2 makes env's runs of overwrite.Row and overwrite.Partition, tombstone.Delete and
// Undelete, keymigrate.DualWrite and Backfill go through the v2 driver: the gocqlv2
// packages on a v2 session through the worker's proxy, the generated rows' values mapped
// to the v2 driver's types (toV2). Setup, the other writer and the reads (tombstone's
// List included) stay on gocql v1.7's session: what Cassandra holds does not depend on
// the driver that reads it, and the tombstone record format is one for both.
func (env *opsEnv) useV2(t *testing.T, ctx context.Context) {
	s2 := newV2(t, env.ks).s
	env.ow2 = map[string]*overwritev2.Table{}
	env.weights = []opWeight{{opRow, 6}, {opPartition, 4}, {opDelete, 3}, {opUndelete, 3}, {opDualWrite, 4}, {opBackfill, 2}}
	for _, tb := range env.tables {
		if tb.counter {
			continue
		}
		for _, name := range []string{tb.name, env.v2[tb.name].name, env.bf[tb.name].name} {
			ot, err := overwritev2.Describe(ctx, s2, env.ks, name)
			if err != nil {
				t.Fatalf("v2: describe %s: %v", name, err)
			}
			env.ow2[name] = ot
		}
	}
}

// twin returns a copy of tb named name, with the partition key column k of type text
// when text is set.
func twin(tb *table, name string, text bool) *table {
	c := *tb
	c.name = name
	c.cols = append([]*column(nil), tb.cols...)
	if text {
		k := *c.cols[0]
		k.t = scalar("text")
		c.cols[0] = &k
		c.kText = true
	}
	return &c
}

func newOpsEnv(t *testing.T, ctx context.Context, seed uint64) *opsEnv {
	s, ks := node.Keyspace(t)
	env := &opsEnv{s: s, ks: ks, ow: map[string]*overwrite.Table{}, owErr: map[string]error{},
		v2: map[string]*table{}, bf: map[string]*table{}, bfMu: map[string]*sync.Mutex{}}
	env.tables = generateSchemas(rand64(seed, 1<<62))
	env.plain = plainTables(rand64(seed, 1<<61))
	env.tables = append(env.tables, env.plain...)
	env.tables = append(env.tables, regressionTables()...)
	created := map[string]bool{}
	ddl := func(tb *table) {
		for _, q := range tb.ddl(ks) {
			if created[q] {
				continue
			}
			created[q] = true
			if err := s.Query(q).WithContext(ctx).Exec(); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	for _, tb := range env.tables {
		ddl(tb)
		if tb.counter {
			continue
		}
		env.v2[tb.name] = twin(tb, tb.name+"_v2", true)
		env.bf[tb.name] = twin(tb, tb.name+"_bf", false)
		env.bfMu[tb.name] = &sync.Mutex{}
		ddl(env.v2[tb.name])
		ddl(env.bf[tb.name])
	}
	for name, ttl := range map[string]time.Duration{eventsTable: 0, eventsTTLTable: 48 * time.Hour} {
		if err := schema.ApplyTemplate(ctx, s, "eventlog", schema.Params{Keyspace: ks, Table: name, TTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	if err := schema.ApplyTemplate(ctx, s, "tombstones", schema.Params{Keyspace: ks, Table: tombTable}); err != nil {
		t.Fatal(err)
	}
	if err := s.AwaitSchemaAgreement(ctx); err != nil {
		t.Fatal(err)
	}
	describe := func(tb *table) {
		ot, err := overwrite.Describe(ctx, s, ks, tb.name)
		env.ow[tb.name], env.owErr[tb.name] = ot, err
	}
	for _, tb := range env.tables {
		describe(tb)
		if !tb.counter {
			describe(env.v2[tb.name])
			describe(env.bf[tb.name])
			for _, n := range []string{tb.name, tb.name + "_v2", tb.name + "_bf"} {
				if env.owErr[n] != nil {
					t.Fatalf("describe %s: %v", n, env.owErr[n])
				}
			}
		}
	}
	return env
}

// opWorker runs cases one at a time through its own fault proxy and session, so a
// proxy rule sees only the writes of the case it was set for.
type opWorker struct {
	env *opsEnv
	r   *runner // direct session: setup, reads, the other writer
	ps  *gocql.Session
	ps2 *gocqlv2.Session // through the same proxy, for a run on the v2 driver
	px  *faultproxy.Proxy
	dir string
}

func newOpWorker(t *testing.T, env *opsEnv) *opWorker {
	px, err := faultproxy.Start(node.Hosts()[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	cl, err := node.ClusterVia(px.Addr(), env.ks)
	if err != nil {
		t.Fatal(err)
	}
	cl.Timeout = opClientTimeout
	cl.NumConns = 1
	ps, err := cl.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ps.Close)
	w := &opWorker{env: env, r: &runner{s: env.s, ks: env.ks, d: newV1(env.s)}, ps: ps, px: px, dir: t.TempDir()}
	if env.ow2 != nil {
		w.ps2 = v2Via(t, px.Addr(), env.ks, opClientTimeout, 4)
	}
	return w
}

// place is where one run of an operation happens: A (once, no fault), B (first response
// dropped, retried by the library) or C (a reference run for a refusal).
type place struct {
	name string
	slot int
	key  pkey
	s    *gocql.Session // through the worker's proxy
	p    *retry.Policy
	s2   *gocqlv2.Session // the same, on the v2 driver (a v2 run)
	p2   *retryv2.Policy
	// ts is the value the place's frozen clock starts from: A, B and C draw the same
	// sequence of write timestamps, so WRITETIMEs compare exactly.
	ts      int64
	attempt int
	ids     map[gocql.UUID]int // eventlog: event id → index in the Append call
	dir     string
	step    int            // retry.Do: the step running
	refStep int            // retry.Do: the step B was refused at (C runs up to it)
	ob      *outbox.Outbox // outbox case, B
	note    string         // what happened, for the report
}

// policy returns a retry policy for a place: a clock frozen at ts (every place draws the
// same timestamps in the same order), the session's schema, short backoffs.
func placePolicy(s *gocql.Session, ts int64, opts ...retry.Option) *retry.Policy {
	clk := clientid.NewClockFunc(func() time.Time { return time.UnixMicro(ts) })
	base := []retry.Option{retry.WithClock(clk), retry.WithSchema(retry.SessionSchema(s)),
		retry.WithBackoff(5*time.Millisecond, 40*time.Millisecond), retry.WithoutJitter()}
	return retry.NewPolicy(append(base, opts...)...)
}

// placePolicyV2 is placePolicy on the v2 driver.
func placePolicyV2(s *gocqlv2.Session, ts int64) *retryv2.Policy {
	clk := clientid.NewClockFunc(func() time.Time { return time.UnixMicro(ts) })
	return retryv2.NewPolicy(retryv2.WithClock(clk), retryv2.WithSchema(retryv2.SessionSchema(s)),
		retryv2.WithBackoff(5*time.Millisecond, 40*time.Millisecond), retryv2.WithoutJitter())
}

// dropNth drops the response to the n-th write (n ≥ 1) that match selects, and calls
// onDrop when it does; every such write is counted in seen.
func dropNth(n int, seen *atomic.Int64, match func(faultproxy.Request) bool, onDrop func()) faultproxy.Rule {
	return func(r faultproxy.Request) faultproxy.Action {
		if !r.IsWrite() || (match != nil && !match(r)) {
			return faultproxy.Forward
		}
		if int(seen.Add(1)) == n {
			onDrop()
			return faultproxy.DropResponse
		}
		return faultproxy.Forward
	}
}

// dropAll drops the response to every write match selects.
func dropAll(match func(faultproxy.Request) bool) faultproxy.Rule {
	return func(r faultproxy.Request) faultproxy.Action {
		if r.IsWrite() && (match == nil || match(r)) {
			return faultproxy.DropResponse
		}
		return faultproxy.Forward
	}
}

// textValue is a text value as the protocol carries it: length, then bytes. A rule can
// find a partition key in a request body with it.
func textValue(s string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
	return append(b, s...)
}

// migrationTo returns a keymigrate Transform that maps the old key to text k prefix+k.
func migrationTo(prefix string, cks []*column) keymigrate.Transform {
	return func(old map[string]any) (map[string]any, error) {
		k, ok := old["k"]
		if !ok {
			return nil, fmt.Errorf("oracle: no k in %v", old)
		}
		out := map[string]any{"k": prefix + fmt.Sprint(k), "slot": old["slot"]}
		for _, c := range cks {
			out[c.name] = old[c.name]
		}
		return out, nil
	}
}

func rand64(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// plainTables are tables without UDT, tuple and vector columns: the generated themes
// each hold one, and the library refuses them in places (see CORRECTNESS.md), so these
// let every operation run over scalars, collections and statics. Before Cassandra 5.0
// one more has only frozen collections (see below).
func plainTables(r *rand.Rand) []*table {
	elem := func(key bool) *ctype {
		names := scalarNames
		if key {
			names = keyScalars
		}
		return scalar(pick(r, names))
	}
	mk := func(name string, ttl int, clustering int, frozen bool) *table {
		tb := &table{name: name, theme: "plain", kText: r.IntN(2) == 0, defaultTTL: ttl}
		kt := "bigint"
		if tb.kText {
			kt = "text"
		}
		tb.cols = []*column{{name: "k", t: scalar(kt), role: rolePartition}, {name: "slot", t: scalar("int"), role: rolePartition}}
		for i := 0; i < clustering; i++ {
			tb.cols = append(tb.cols, &column{name: fmt.Sprintf("c%d", i), t: elem(true), role: roleClustering, desc: r.IntN(2) == 0})
		}
		reg := func(t *ctype) {
			tb.cols = append(tb.cols, &column{name: fmt.Sprintf("r%d", len(tb.byRole(roleRegular))), t: t, role: roleRegular})
		}
		for i := 0; i < 4; i++ {
			reg(elem(false))
		}
		reg(&ctype{kind: kList, frozen: frozen, elems: []*ctype{elem(false)}})
		reg(&ctype{kind: kSet, frozen: frozen, elems: []*ctype{elem(true)}})
		reg(&ctype{kind: kMap, frozen: frozen, elems: []*ctype{elem(true), elem(false)}})
		reg(&ctype{kind: kList, frozen: true, elems: []*ctype{elem(false)}})
		reg(&ctype{kind: kMap, frozen: true, elems: []*ctype{elem(true), {kind: kSet, frozen: true, elems: []*ctype{elem(true)}}}})
		if clustering > 0 {
			tb.cols = append(tb.cols, &column{name: "s0", t: elem(false), role: roleStatic},
				&column{name: "s1", t: &ctype{kind: kSet, frozen: frozen, elems: []*ctype{elem(true)}}, role: roleStatic})
		}
		return tb
	}
	tables := []*table{mk("t_plain", 0, 1, false), mk("t_plain_ttl", 86400, 2, false), mk("t_plain_nock", 0, 0, false)}
	if before50() {
		// tombstone and keymigrate's Backfill refuse non-frozen collections before 5.0
		// (table.ErrUnsupported): a table of frozen ones lets them run there.
		tables = append(tables, mk("t_plain_frozen", 0, 1, true))
	}
	return tables
}

// regressionTables hold the minimised schemas of failures the oracle found.
func regressionTables() []*table {
	return []*table{{name: "t_reg_varint_map", theme: "regression", cols: []*column{
		{name: "k", t: scalar("bigint"), role: rolePartition}, {name: "slot", t: scalar("int"), role: rolePartition},
		{name: "c0", t: scalar("int"), role: roleClustering},
		{name: "r0", t: &ctype{kind: kMap, elems: []*ctype{scalar("varint"), scalar("int")}}, role: roleRegular},
	}}}
}
