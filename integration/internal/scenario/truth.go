package scenario

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
)

// The kinds of write RandomizedTruth mixes, each on a table of its own, one fresh key
// per operation: how many times the operation applied is read back from Cassandra.
const (
	truthCounter   = iota // counter increment: never repeatable
	truthAppend           // non-frozen list append: never repeatable
	truthLWTAppend        // conditional append whose condition always holds: applies again if re-sent
	truthInsertNew        // INSERT … IF NOT EXISTS on a fresh key
	truthInsert           // plain insert: repeatable
	truthBind             // values from a binder minting an id per call (Session.Bind)
	truthKinds
)

var truthNames = [truthKinds]string{"counter", "list append", "LWT append", "IF NOT EXISTS", "insert", "Bind"}

// truthTables are the kinds' tables (prefixed per run); truthStmts their statements,
// %s the table.
var (
	truthTables = [truthKinds]string{"ctr", "list", "lwt", "ine", "kv", "bind"}
	truthStmts  = [truthKinds]string{
		`UPDATE %s SET n = n + 1 WHERE id = ?`,
		`UPDATE %s SET l = l + ['x'] WHERE id = ?`,
		`UPDATE %s SET l = l + ['x'] WHERE id = ? IF v = 'base'`,
		`INSERT INTO %s (id, v) VALUES (?, 'x') IF NOT EXISTS`,
		`INSERT INTO %s (id, v) VALUES (?, 'x')`,
		`INSERT INTO %s (id, u) VALUES (?, ?)`,
	}
	truthDDL = [truthKinds]string{
		`(id int PRIMARY KEY, n counter)`,
		`(id int PRIMARY KEY, l list<text>)`,
		`(id int PRIMARY KEY, v text, l list<text>)`,
		`(id int PRIMARY KEY, v text)`,
		`(id int PRIMARY KEY, v text)`,
		`(id int, u text, PRIMARY KEY (id, u))`,
	}
)

// TruthResult is what one RandomizedTruth run saw, by kind.
type TruthResult struct {
	Ops                     int
	Told                    [truthKinds][3]int // told applied, outcome unknown, not applied
	Violations              [truthKinds]int
	Examples                []string // the first violations, described
	Faults, FaultsRequested int64
}

// Total is the number of violations over every kind.
func (r TruthResult) Total() int {
	n := 0
	for _, v := range r.Violations {
		n += v
	}
	return n
}

func (r TruthResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d operations, %d of %d write requests faulted; by kind (told applied / unknown / not applied → violations):", r.Ops, r.Faults, r.FaultsRequested)
	for k := 0; k < truthKinds; k++ {
		fmt.Fprintf(&b, " %s %d/%d/%d → %d;", truthNames[k], r.Told[k][0], r.Told[k][1], r.Told[k][2], r.Violations[k])
	}
	return b.String()
}

// RandomizedTruth runs ops writes on 8 goroutines — counter increments, list appends,
// conditional appends, IF NOT EXISTS inserts, plain inserts and Bind statements, each on
// a fresh key — while px answers each write request, at random (seeded), normally or
// with a fault before Cassandra saw it (Unavailable, Overloaded: not forwarded) or after
// it applied it (the response dropped, a write timeout in its place — and, for an LWT,
// Unavailable or Overloaded, as Paxos's commit phase raises them, or Unavailable at
// SERIAL before its round —, the connection reset or sent garbage, which also fails
// every other request in flight on it). Then it reads what Cassandra holds and checks
// each operation against what it was told: nil → applied exactly once; an outcome
// unknown → at most once; any other error → not applied.
//
// With naive set, every write goes through p.Raw in a loop that re-sends on any error
// (four attempts 25 ms apart, binder called per attempt, as a driver re-binds) and
// calls its errors "not applied": the control, which must show violations.
func RandomizedTruth(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, p Policy, bind func(ctx context.Context, stmt string, bind func() []any) error, seed uint64, ops int, naive bool) TruthResult {
	t.Helper()
	prefix := "rt_p_"
	if naive {
		prefix = "rt_n_"
	}
	table := func(k int) string { return prefix + truthTables[k] }
	var stmts [truthKinds]string
	for k := range stmts {
		stmts[k] = fmt.Sprintf(truthStmts[k], table(k))
		if err := s0.Query(`CREATE TABLE ` + table(k) + ` ` + truthDDL[k]).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	kindOf := func(i int) int { return int(rand.New(rand.NewPCG(seed, uint64(i))).IntN(truthKinds)) }
	for i := -1; i < ops; i++ {
		if i == -1 || kindOf(i) == truthLWTAppend {
			if err := s0.Query(`INSERT INTO `+table(truthLWTAppend)+` (id, v) VALUES (?, 'base')`, i).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	minted := func(id int) func() []any {
		return func() []any {
			u, _ := gocql.RandomUUID()
			return []any{id, u.String()}
		}
	}
	// Prepared fault-free, through the session alone: a fault must not hide an
	// UNPREPARED from the driver.
	px.SetRule(nil)
	for k, st := range stmts {
		args := []any{-1}
		if k == truthBind {
			args = minted(-1)()
		}
		if err := p.Raw(st, args...); err != nil {
			t.Fatalf("warm-up %q: %v", st, err)
		}
	}

	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(seed, 1<<62))
	var faults, requested atomic.Int64
	ours := func(r faultproxy.Request) bool { return r.IsWrite() && strings.Contains(r.CQL, prefix) }
	px.SetRule(func(r faultproxy.Request) faultproxy.Action {
		if !ours(r) {
			return faultproxy.Forward
		}
		requested.Add(1)
		mu.Lock()
		x := rnd.Float64()
		mu.Unlock()
		lwt := strings.Contains(r.CQL, " IF ")
		writeType := "SIMPLE"
		switch {
		case lwt:
			writeType = "CAS"
		case strings.Contains(r.CQL, table(truthCounter)):
			writeType = "COUNTER"
		}
		// Unavailable and Overloaded come after the write applied only for an LWT (in
		// Paxos's commit phase); for any other write Cassandra raises them before
		// sending a mutation, and so does the proxy.
		afterApply := faultproxy.ForwardThenReply
		if !lwt {
			afterApply = faultproxy.Reply
		}
		var a faultproxy.Action
		switch {
		case x < 0.50:
			return faultproxy.Forward
		case x < 0.60:
			a = faultproxy.DropResponse
		case x < 0.67:
			a = afterApply(faultproxy.Unavailable())
		case x < 0.74:
			a = afterApply(faultproxy.Overloaded())
		case x < 0.81:
			a = faultproxy.Reply(faultproxy.Unavailable())
		case x < 0.87 && lwt && x >= 0.84:
			// Unavailable at SERIAL: raised only before a Paxos round begins, so the
			// Policy re-sends it (docs/lwt.md).
			a = faultproxy.Reply(faultproxy.UnavailableAt(faultproxy.Serial))
		case x < 0.87:
			a = faultproxy.Reply(faultproxy.Overloaded())
		case x < 0.97:
			a = faultproxy.ForwardThenReply(faultproxy.WriteTimeout(writeType))
		case x < 0.985: // rare: the session has one connection, and it takes a while back
			a = faultproxy.Reset
		default:
			a = faultproxy.Garbage
		}
		faults.Add(1)
		return a
	})

	const (
		toldApplied = iota
		toldUnknown
		toldNot
	)
	told := make([]int, ops)
	var next atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= ops {
					return
				}
				k := kindOf(i)
				var err error
				switch {
				case naive:
					args := []any{i}
					for a := 0; a < 4; a++ {
						if a > 0 {
							time.Sleep(25 * time.Millisecond)
						}
						if k == truthBind {
							args = minted(i)()
						}
						if err = p.Raw(stmts[k], args...); err == nil {
							break
						}
					}
				case k == truthBind:
					err = bind(ctx, stmts[k], minted(i))
				default:
					err = p.Exec(ctx, stmts[k], i)
				}
				switch unknown, _ := p.Unknown(err); {
				case err == nil:
					told[i] = toldApplied
				case unknown && !naive:
					told[i] = toldUnknown
				default:
					told[i] = toldNot
				}
			}
		}()
	}
	wg.Wait()
	px.SetRule(nil)
	// A request forwarded just before its connection was reset may still be running in
	// Cassandra: let it finish before what Cassandra holds is read.
	time.Sleep(time.Second)
	res := TruthResult{Ops: ops, Faults: faults.Load(), FaultsRequested: requested.Load()}

	// What Cassandra holds: the number of times each operation applied. Conditional
	// tables are read at SERIAL, which completes a Paxos round left in progress.
	applied := func(k, id int) int {
		q := s0.Query(`SELECT * FROM `+table(k)+` WHERE id = ?`, id)
		if k == truthLWTAppend || k == truthInsertNew {
			q.Consistency(gocql.Consistency(gocql.Serial))
		}
		rows, err := q.Iter().SliceMap()
		if err != nil {
			t.Fatalf("read %s %d: %v", table(k), id, err)
		}
		switch k {
		case truthCounter:
			if len(rows) == 0 {
				return 0
			}
			return int(rows[0]["n"].(int64))
		case truthAppend, truthLWTAppend:
			if len(rows) == 0 {
				return 0
			}
			l, _ := rows[0]["l"].([]string)
			return len(l)
		default: // a row per application (Bind), or the row itself
			return len(rows)
		}
	}
	for i := 0; i < ops; i++ {
		k := kindOf(i)
		n := applied(k, i)
		tl := told[i]
		res.Told[k][tl]++
		bad := tl == toldApplied && n != 1 || tl == toldUnknown && n > 1 || tl == toldNot && n != 0
		if bad {
			res.Violations[k]++
			if len(res.Examples) < 5 {
				res.Examples = append(res.Examples, fmt.Sprintf("op %d (%s): told %s, applied %d times",
					i, truthNames[k], []string{"applied", "outcome unknown", "not applied"}[tl], n))
			}
		}
	}
	return res
}

// Truth runs RandomizedTruth through p (bind sends Bind statements through it), then
// as the naive control, and fails the test on any violation of p's, or on a control
// without one (the faults would not exercise the promise). CQLSAFE_TRUTH_SEED (default:
// the time) and CQLSAFE_TRUTH_OPS (default 400) set the seed and the operations per run;
// the seed is logged to re-run a failure.
func Truth(t *testing.T, s0 *gocql.Session, px *faultproxy.Proxy, p Policy, bind func(ctx context.Context, stmt string, bind func() []any) error) {
	t.Helper()
	seed, ops := uint64(time.Now().UnixNano()), 400
	if v := os.Getenv("CQLSAFE_TRUTH_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("CQLSAFE_TRUTH_SEED=%q: %v", v, err)
		}
		seed = n
	}
	if v := os.Getenv("CQLSAFE_TRUTH_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CQLSAFE_TRUTH_OPS=%q: want a positive count", v)
		}
		ops = n
	}
	t.Logf("seed %d (CQLSAFE_TRUTH_SEED=%d re-runs it), %d operations", seed, seed, ops)
	res := RandomizedTruth(t, s0, px, p, bind, seed, ops, false)
	t.Logf("through the Policy: %v", res)
	if res.Total() != 0 {
		t.Errorf("%d operations told something Cassandra does not hold (seed %d); first: %s", res.Total(), seed, strings.Join(res.Examples, "; "))
	}
	ctl := RandomizedTruth(t, s0, px, p, bind, seed, ops, true)
	t.Logf("naive control (re-send on any error): %v", ctl)
	if ctl.Total() == 0 {
		t.Errorf("the naive control shows no violation (seed %d): these faults do not exercise the promise", seed)
	} else {
		t.Logf("naive control, first violations: %s", strings.Join(ctl.Examples, "; "))
	}
}
