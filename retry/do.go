package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"

	"github.com/gocql/gocql"
)

type doKey struct{}

// doRun remembers, across re-runs of Do's function, which steps (Exec and ExecBatch
// calls, in order) have been applied and the timestamp each was pinned to.
type doRun struct {
	policy *Policy
	mu     sync.Mutex
	steps  []doStep
	next   int
	failed []doStep // the steps that failed in the current run
}

type doStep struct {
	key     string
	values  []any // the values the step was first sent with
	ts      int64
	done    bool
	verdict Verdict // the step's verdict when it last ran
	err     error   // the step's error when it failed
}

// Do runs multi-statement work with retry instead of rollback. fn issues its writes
// through Exec and ExecBatch with the ctx it is given; each such call is a step. When a
// step fails with a retryable error and is idempotent, Do waits (backoff) and calls fn
// again: steps that already succeeded return nil at once without touching Cassandra,
// and the failed step is re-sent with the timestamp it was pinned to the first time.
// Nothing is undone. fn must issue the same statements with the same values in the same
// order on every run — mint ids and times before Do, not inside fn — else the step
// returns ErrNondeterministic and nothing is sent; fn should hold no other side effects.
//
// Do gives up and returns the error when it is not retryable (errors fn returns on its
// own are not), when the failed step is not idempotent, when the policy's attempts are
// exhausted, or when ctx is done. Within each step the policy also retries at once on
// its own, as Exec does.
func Do(ctx context.Context, fn func(ctx context.Context) error, opts ...Option) error {
	if fn == nil {
		return errors.New("retry: Do needs a function")
	}
	p := NewPolicy(opts...)
	if p.err != nil {
		return p.err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	run := &doRun{policy: p}
	tctx, tr := p.begin(ctx, Execution{Operation: "retry.Do"})
	rctx := context.WithValue(tctx, doKey{}, run)
	for attempt := 1; ; attempt++ {
		run.mu.Lock()
		run.next, run.failed = 0, nil
		run.mu.Unlock()
		err := fn(rctx)
		if err == nil {
			tr.End(nil, attempt)
			return nil
		}
		run.mu.Lock()
		failed := run.failed
		run.mu.Unlock()
		ev := Event{Attempt: attempt, Err: err, Class: ClassifyError(err), Statement: "Do", Idempotent: len(failed) > 0}
		if len(failed) == 0 {
			ev.Reason = ReasonNotAStep
		}
		// Every step that failed in this run is re-sent by the next: each must allow it
		// (fn may have carried on after a failure, or joined several errors).
		for _, f := range failed {
			ev.Idempotent = ev.Idempotent && f.verdict.Idempotent
			if ev.Retrying, ev.Reason = p.decide(ctx, f.err, f.verdict, true, attempt); !ev.Retrying {
				break
			}
		}
		if ev.Retrying {
			ev.Delay = p.delay(attempt)
		} else {
			ev.Why = why(ev.Reason, err)
		}
		p.report(ev)
		tr.Attempt(ev)
		if !ev.Retrying {
			tr.End(err, attempt)
			return err
		}
		if serr := sleep(ctx, ev.Delay); serr != nil {
			tr.End(err, attempt)
			return err
		}
	}
}

func doFrom(ctx context.Context) *doRun {
	run, _ := ctx.Value(doKey{}).(*doRun)
	return run
}

// step claims the next step of the current run. It returns the step index, the
// timestamp pinned the first time (0 if none yet) and whether it is already done. A
// step whose statement or bound values differ from the first run's is
// ErrNondeterministic: re-sending other values under the first timestamp would write
// something the first attempt never meant (a second row, for an id minted inside fn).
func (run *doRun) step(key string, values []any) (int, int64, bool, error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	i := run.next
	run.next++
	if i < len(run.steps) {
		s := run.steps[i]
		if s.key != key {
			return i, 0, false, fmt.Errorf("%w: step %d was %q, now %q", ErrNondeterministic, i+1, s.key, key)
		}
		if !sameValues(s.values, values) {
			return i, 0, false, fmt.Errorf("%w: step %d (%q) is bound to other values than on the first run (mint ids and times before Do, not inside fn)", ErrNondeterministic, i+1, key)
		}
		return i, s.ts, s.done, nil
	}
	run.steps = append(run.steps, doStep{key: key, values: values})
	return i, 0, false, nil
}

func (run *doRun) finish(i int, ts int64, v Verdict, err error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.steps[i].ts = ts
	run.steps[i].verdict = v
	if err == nil {
		run.steps[i].done = true
		return
	}
	s := run.steps[i]
	s.err = err
	run.failed = append(run.failed, s)
}

// ErrOutsideDo is returned by the package-level Exec and ExecBatch when their context
// does not come from Do: outside Do, run statements with Policy.Exec.
var ErrOutsideDo = errors.New("retry: Exec and ExecBatch run steps of Do; outside Do use Policy.Exec or Policy.ExecBatch")

// Exec is one step of the function given to Do, under Do's policy: skipped when a
// previous run already applied it, re-sent with its first timestamp and values
// otherwise (see Do). ctx must be the one Do passed to the function: elsewhere Exec
// sends nothing and returns ErrOutsideDo. (Policy.Exec with Do's context is a step too,
// under that Policy.)
func Exec(ctx context.Context, q *gocql.Query) error {
	run := doFrom(ctx)
	if run == nil {
		return ErrOutsideDo
	}
	return run.exec(ctx, run.policy, q, execConfig{})
}

// ExecBatch is Exec for a batch on s: one step of the function given to Do.
func ExecBatch(ctx context.Context, s *gocql.Session, b *gocql.Batch) error {
	run := doFrom(ctx)
	if run == nil {
		return ErrOutsideDo
	}
	return run.execBatch(ctx, run.policy, s, b, execConfig{})
}

// exec runs q as the next step of the run, through p. A timestamp the caller brought
// (AtTimestamp) is part of what must be the same on a re-run.
func (run *doRun) exec(ctx context.Context, p *Policy, q *gocql.Query, c execConfig) error {
	if q == nil {
		return errors.New("retry: nil query")
	}
	values := snapshot(q.Values())
	if c.TS != 0 {
		values = append(values, c.TS)
	}
	i, ts, done, err := run.step(q.Statement(), values)
	if err != nil || done {
		return err
	}
	if ts != 0 {
		c.TS = ts
	}
	pq, err := p.pin(ctx, q, c)
	if err != nil {
		return err
	}
	err = p.execPinned(pq)
	run.finish(i, pq.timestamp, pq.verdict, err)
	return err
}

func (run *doRun) execBatch(ctx context.Context, p *Policy, s *gocql.Session, b *gocql.Batch, c execConfig) error {
	if s == nil || b == nil {
		return errors.New("retry: nil session or batch")
	}
	keys := make([]string, len(b.Entries))
	var values []any
	for i, e := range b.Entries {
		keys[i] = e.Stmt
		values = append(values, snapshot(e.Args)...)
	}
	if c.TS != 0 {
		values = append(values, c.TS)
	}
	i, ts, done, err := run.step("BATCH:"+strings.Join(keys, "\x00"), values)
	if err != nil || done {
		return err
	}
	if ts != 0 {
		c.TS = ts
	}
	pb, err := p.pinBatch(ctx, s, b, c)
	if err != nil {
		return err
	}
	err = p.execPinnedBatch(s, pb)
	run.finish(i, pb.timestamp, pb.verdict, err)
	return err
}

// snapshot deep-copies bound values — through pointers, slices, maps and arrays — so
// that a caller reusing a variable or buffer between runs (binding &id, then minting a
// new id into it) does not change what the first run is remembered to have sent.
func snapshot(values []any) []any {
	out := make([]any, len(values))
	for i, v := range values {
		if v == nil {
			continue // NULL: nothing to copy (and no reflect.Value to take it from)
		}
		out[i] = deepCopy(reflect.ValueOf(v)).Interface()
	}
	return out
}

func deepCopy(v reflect.Value) reflect.Value {
	if !v.IsValid() {
		return reflect.Zero(reflect.TypeFor[any]()) // a nil interface
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Array:
		c := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(deepCopy(it.Key()), deepCopy(it.Value()))
		}
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem()))
		return c
	}
	return v // scalars and structs (by value)
}

// sameValues compares a re-run's values with the first run's: deeply, with NaN equal to
// NaN (the same value bound twice).
func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) && !bothNaN(a[i], b[i]) {
			return false
		}
	}
	return true
}

func bothNaN(a, b any) bool {
	isNaN := func(v any) bool {
		switch x := v.(type) {
		case float64:
			return math.IsNaN(x)
		case float32:
			return math.IsNaN(float64(x))
		case *float64:
			return x != nil && math.IsNaN(*x)
		case *float32:
			return x != nil && math.IsNaN(float64(*x))
		}
		return false
	}
	return isNaN(a) && isNaN(b)
}
