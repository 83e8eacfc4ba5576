package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// ErrOutsideDo is returned by the package-level Exec and ExecBatch when their context
// does not come from Do.
var ErrOutsideDo = errors.New("retry: Exec and ExecBatch run steps of Do; outside Do use Policy.Exec or Policy.ExecBatch")

// ErrDoHedging is Do's answer to a WithHedging among its own options: a budget per call
// bounds nothing (see the adapters' Do).
var ErrDoHedging = errors.New("retry: WithHedging given to Do starts a hedge budget per call; hedge under a Policy you keep: p.Do(ctx, fn) or Do(ctx, fn, WithPolicy(p))")

type doKey struct{}

// DoRun is one call of Do: the steps its function issued, in order, and how each went.
// Policy is the adapter's Policy Do runs with (the adapters' Exec find it here).
type DoRun struct {
	Policy any
	e      *Engine
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
	verdict verdict.Verdict // the step's verdict when it last ran
	err     error           // the step's error when it failed
	// unknown is the first outcome-unknown error of the step, kept across runs: once a
	// run may have applied the step, a later run's "nothing applied" does not undo it.
	unknown error
}

// Do runs fn until it succeeds or a failed step may not be re-sent (the adapters
// document it as retry.Do): policy is the adapter's Policy, e its engine.
func Do(ctx context.Context, e *Engine, policy any, fn func(ctx context.Context) error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	run := &DoRun{Policy: policy, e: e}
	tctx, tr := e.Begin(ctx, Execution{Operation: "retry.Do"})
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
		ev := Event{Attempt: attempt, Err: err, Class: e.facts(err).Class, Statement: "Do", Idempotent: len(failed) > 0}
		if len(failed) == 0 {
			ev.Reason = decision.ReasonNotAStep
		}
		for _, f := range failed {
			ev.Idempotent = ev.Idempotent && f.verdict.Idempotent
			if ev.Retrying, ev.Reason = e.Decide(ctx, f.err, f.verdict, true, attempt); !ev.Retrying {
				break
			}
		}
		if ev.Retrying {
			ev.Delay = e.Delay(attempt)
		} else {
			ev.Why = e.Why(ev.Reason, err)
		}
		e.Report(ev)
		tr.Attempt(ev)
		if !ev.Retrying {
			err = run.withEarlierUnknown(err)
			tr.End(err, attempt)
			return err
		}
		if serr := wait.Sleep(ctx, ev.Delay); serr != nil {
			err = run.withEarlierUnknown(err)
			tr.End(err, attempt)
			return err
		}
	}
}

// DoFrom is the Do run ctx belongs to, or nil.
func DoFrom(ctx context.Context) *DoRun {
	run, _ := ctx.Value(doKey{}).(*DoRun)
	return run
}

// Sent is how a step went when the adapter tried to send it: sent false when nothing was
// sent (its options or the clock refused it: err says why).
type Sent struct {
	Sent      bool
	Timestamp int64
	Verdict   verdict.Verdict
	Err       error
}

// Step runs one step, key naming its statement(s) and values their bound values (a
// Snapshot): skipped when a previous run applied it, re-sent with its first timestamp
// otherwise; a step bound to other values than on the first run is ErrNondeterministic,
// and nothing is sent. send pins and executes it with c (c.TS: the first run's).
func (run *DoRun) Step(key string, values []any, c ExecConfig, send func(ExecConfig) Sent) error {
	if c.TS != 0 {
		values = append(values, c.TS)
	}
	i, ts, done, err := run.step(key, values)
	if err != nil || done {
		return err
	}
	if ts != 0 {
		c.TS = ts
	}
	s := send(c)
	if !s.Sent {
		return s.Err
	}
	run.finish(i, s.Timestamp, s.Verdict, s.Err)
	return s.Err
}

// BatchKey names a batch step by its statements.
func BatchKey(stmts []string) string { return "BATCH:" + strings.Join(stmts, "\x00") }

func (run *DoRun) step(key string, values []any) (int, int64, bool, error) {
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

func (run *DoRun) finish(i int, ts int64, v verdict.Verdict, err error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	run.steps[i].ts = ts
	run.steps[i].verdict = v
	if err == nil {
		run.steps[i].done = true
		return
	}
	if run.steps[i].unknown == nil && errors.Is(err, ErrOutcomeUnknown) {
		run.steps[i].unknown = err
	}
	s := run.steps[i]
	s.err = err
	run.failed = append(run.failed, s)
}

// withEarlierUnknown is Do's final error: err, unless some step not applied since may
// have been applied by an earlier run and err does not say so — whatever ended this
// run (the step failing again, refused before sending, the function's own error) —
// then an error that matches the earlier outcome-unknown error (errors.Is
// ErrOutcomeUnknown, errors.As its type, with the step's statements and pinned
// timestamp) and says what happened last.
func (run *DoRun) withEarlierUnknown(err error) error {
	if errors.Is(err, ErrOutcomeUnknown) {
		return err
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, s := range run.steps {
		if s.unknown != nil && !s.done {
			return fmt.Errorf("%w; an earlier run of a step may have applied it: %w", err, s.unknown)
		}
	}
	return err
}

// Snapshot deep-copies bound values — through pointers, slices, maps and arrays — so
// that a caller reusing a variable or buffer between runs (binding &id, then minting a
// new id into it) does not change what the first run is remembered to have sent.
func Snapshot(values []any) []any {
	out := make([]any, len(values))
	seen := map[uintptr]reflect.Value{} // pointers copied already: cycles and shared values
	for i, v := range values {
		if v == nil {
			continue // NULL: nothing to copy (and no reflect.Value to take it from)
		}
		out[i] = deepCopy(reflect.ValueOf(v), seen).Interface()
	}
	return out
}

// deepCopy copies v deeply; seen maps the pointers copied so far to their copies, so a
// value that points back at itself (a struct with a back-pointer) is copied once, with
// the same shape, instead of forever.
func deepCopy(v reflect.Value, seen map[uintptr]reflect.Value) reflect.Value {
	if !v.IsValid() {
		return reflect.Zero(reflect.TypeFor[any]()) // a nil interface
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		if c, ok := seen[v.Pointer()]; ok && c.Type() == v.Type() {
			return c
		}
		c := reflect.New(v.Type().Elem())
		seen[v.Pointer()] = c
		c.Elem().Set(deepCopy(v.Elem(), seen))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i), seen))
		}
		return c
	case reflect.Array:
		c := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i), seen))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		if c, ok := seen[v.Pointer()]; ok && c.Type() == v.Type() {
			return c
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		seen[v.Pointer()] = c
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(deepCopy(it.Key(), seen), deepCopy(it.Value(), seen))
		}
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(deepCopy(v.Elem(), seen))
		return c
	case reflect.Struct:
		// By value, then every exported field copied deeply: a slice or map in a struct
		// the caller reuses must not change the copy. Unexported fields stay shared
		// (reflection cannot set them): a value that hides a buffer in one, such as a
		// *big.Int's digits, is the caller's to leave alone.
		c := reflect.New(v.Type()).Elem()
		c.Set(v)
		for i := range v.NumField() {
			if f := c.Field(i); f.CanSet() {
				f.Set(deepCopy(v.Field(i), seen))
			}
		}
		return c
	}
	return v // scalars (by value)
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
