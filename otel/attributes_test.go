package cqlsafeotel

import (
	"context"
	"errors"
	"testing"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/retry"
)

func TestOtelOperationName(t *testing.T) {
	for _, c := range []struct {
		stmt  string
		batch bool
		want  string
	}{
		{"INSERT INTO kv (id) VALUES (?)", false, "INSERT"},
		{"  select * from kv", false, "SELECT"},
		{"-- note\n/* x */ update kv SET v = ? WHERE id = ?", false, "UPDATE"},
		{"// c\nDELETE FROM kv WHERE id = ?", false, "DELETE"},
		{"TRUNCATE kv", false, "TRUNCATE"},
		{"BEGIN UNLOGGED BATCH INSERT INTO kv (id) VALUES (1); APPLY BATCH", false, "BATCH"},
		{"CREATE TABLE kv (id int PRIMARY KEY)", false, ""},
		{"", false, ""},
		{"/* unterminated", false, ""},
		{"INSERT INTO a (id) VALUES (?)\nINSERT INTO b (id) VALUES (?)", true, "BATCH INSERT"},
		{"DELETE FROM a WHERE id = ?\nINSERT INTO a (id) VALUES (?)", true, "BATCH"},
		{"INSERT INTO a (id)\n VALUES (?)", true, "BATCH"}, // a statement over two lines: not sure
		{"", true, "BATCH"},
	} {
		if got := operationName(c.stmt, c.batch); got != c.want {
			t.Errorf("operationName(%q, %v) = %q, want %q", c.stmt, c.batch, got, c.want)
		}
	}
}

func TestOtelRefusalReason(t *testing.T) {
	for _, c := range []struct {
		ev   retry.Event
		want string
	}{
		{retry.Event{Reason: retry.ReasonContextDone}, "context_done"},
		{retry.Event{Reason: retry.ReasonNotIdempotent}, "not_idempotent"},
		{retry.Event{Reason: retry.ReasonAttemptsExhausted}, "attempts_exhausted"},
		{retry.Event{Reason: retry.ReasonBatchLogged}, "batch_logged"},
		{retry.Event{}, "not_retryable"},
	} {
		if got := refusalReason(c.ev); got != c.want {
			t.Errorf("%+v: %q, want %q", c.ev, got, c.want)
		}
	}
	if nextStep(retry.Event{Retrying: true, NextHost: true}) != decisionNextHost || nextStep(retry.Event{Retrying: true}) != decisionRetry {
		t.Error("nextStep")
	}
}

func TestOtelOptions(t *testing.T) {
	for _, o := range []Option{WithTracerProvider(nil), WithMeterProvider(nil), nil} {
		if _, err := New(o); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("err = %v, want ErrInvalidOption", err)
		}
	}
	in, err := New()
	if err != nil || in == nil {
		t.Fatalf("New() = %v, %v", in, err)
	}
	// A nil Instrumentation records nothing and never panics.
	var nilIn *Instrumentation
	ctx, tr := nilIn.Begin(context.Background(), retry.Execution{Operation: "x"})
	if ctx == nil || tr != nil {
		t.Errorf("nil Begin = %v, %v", ctx, tr)
	}
	nilIn.QueryObserver(nil).ObserveQuery(context.Background(), gocql.ObservedQuery{})
	nilIn.BatchObserver(nil).ObserveBatch(context.Background(), gocql.ObservedBatch{})
}

func TestOtelStatusCode(t *testing.T) {
	if _, ok := statusCode(errors.New("x")); ok {
		t.Error("a plain error has no status code")
	}
}
