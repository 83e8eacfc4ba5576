package engine

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"

	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// ExecOption sets something for one execution (the adapters document each as
// retry.AtTimestamp, retry.NotRepeatable, retry.OnlyIfRepeatable, retry.Operation). A
// small value: passing it costs no allocation.
type ExecOption struct {
	ts             int64
	operation      string
	notRepeatable  string
	onlyRepeatable bool
	err            error // an invalid option: the execution returns it, nothing sent
}

// ExecConfig is one execution's settings, from its ExecOptions.
type ExecConfig struct {
	TS             int64  // pinned timestamp; 0: drawn from the Policy's clock
	Operation      string // the execution's name for a Tracer
	NotRepeatable  string // why this execution must not be repeated, whatever its text says
	OnlyRepeatable bool   // refuse to send an execution that is not repeatable
}

// AtTimestamp pins ts instead of drawing one; 0 and math.MinInt64 are refused.
func AtTimestamp(ts int64) ExecOption {
	if ts == 0 || ts == math.MinInt64 {
		return ExecOption{err: fmt.Errorf("retry: timestamp %d is not a write timestamp", ts)}
	}
	return ExecOption{ts: ts}
}

// NotRepeatable marks the execution not repeatable, for reason (not empty).
func NotRepeatable(reason string) ExecOption {
	if reason == "" {
		return ExecOption{err: errors.New("retry: NotRepeatable needs a reason")}
	}
	return ExecOption{notRepeatable: reason}
}

// OnlyIfRepeatable refuses, sending nothing, an execution judged not repeatable.
func OnlyIfRepeatable() ExecOption { return ExecOption{onlyRepeatable: true} }

// Operation names the execution for a Tracer (not empty).
func Operation(name string) ExecOption {
	if name == "" {
		return ExecOption{err: errors.New("retry: Operation needs a name")}
	}
	return ExecOption{operation: name}
}

// ExecOptions folds opts, later ones winning; the first invalid one is the error.
func ExecOptions(opts []ExecOption) (ExecConfig, error) {
	var c ExecConfig
	for _, o := range opts {
		if o.err != nil {
			return c, o.err
		}
		if o.ts != 0 {
			c.TS = o.ts
		}
		if o.operation != "" {
			c.Operation = o.operation
		}
		if o.notRepeatable != "" {
			c.NotRepeatable = o.notRepeatable
		}
		c.OnlyRepeatable = c.OnlyRepeatable || o.onlyRepeatable
	}
	return c, nil
}

// Apply is v as this execution's options change it: NotRepeatable adds its reason;
// OnlyIfRepeatable turns a verdict that is not repeatable into ErrNotIdempotent.
func (c ExecConfig) Apply(v verdict.Verdict) (verdict.Verdict, error) {
	if c.NotRepeatable != "" {
		v = v.WithReason(c.NotRepeatable)
	}
	if c.OnlyRepeatable && !v.Idempotent {
		return v, fmt.Errorf("%w: %v (nothing sent)", ErrNotIdempotent, v.Reasons)
	}
	return v, nil
}

// OwnTimestamp takes the timestamp a caller set on the driver's statement itself
// (Query.WithTimestamp, Batch.WithTimestamp; own 0: none) as the pin — the driver would
// otherwise send the Policy's pin in its place. One that differs from AtTimestamp is an
// error, and nothing is sent.
func (c ExecConfig) OwnTimestamp(own int64) (ExecConfig, error) {
	switch {
	case own == 0:
	case c.TS == 0:
		if own == math.MinInt64 {
			return c, fmt.Errorf("retry: the statement's WithTimestamp(%d) is not a write timestamp", own)
		}
		c.TS = own
	case c.TS != own:
		return c, fmt.Errorf("retry: the statement's WithTimestamp(%d) and AtTimestamp(%d) differ: pin one timestamp", own, c.TS)
	}
	return c, nil
}

// StatementTimestamp is the timestamp a caller set with WithTimestamp on a driver's
// *Query or *Batch (0: none). Every driver cqlsafe supports — gocql v1.7, the ScyllaDB
// fork, the Apache driver v2 — keeps it unexported as defaultTimestamp and
// defaultTimestampValue.
func StatementTimestamp(stmt any) int64 {
	v := reflect.ValueOf(stmt)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return 0
	}
	v = v.Elem()
	idx, ok := tsFields.Load(v.Type())
	if !ok {
		idx, _ = tsFields.LoadOrStore(v.Type(), timestampFields(v.Type()))
	}
	f := idx.([2]int)
	if f[0] < 0 || !v.Field(f[0]).Bool() {
		return 0
	}
	return v.Field(f[1]).Int()
}

// tsFields caches timestampFields by statement type: Exec pays a map lookup, not a
// field search.
var tsFields sync.Map

// timestampFields is the index of t's defaultTimestamp (bool) and defaultTimestampValue
// (int64) fields; -1 when t has no such pair.
func timestampFields(t reflect.Type) [2]int {
	set, ok1 := t.FieldByName("defaultTimestamp")
	ts, ok2 := t.FieldByName("defaultTimestampValue")
	if !ok1 || !ok2 || len(set.Index) != 1 || len(ts.Index) != 1 || set.Type.Kind() != reflect.Bool || ts.Type.Kind() != reflect.Int64 {
		return [2]int{-1, -1}
	}
	return [2]int{set.Index[0], ts.Index[0]}
}
