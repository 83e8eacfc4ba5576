package otelcore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
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
		ev   engine.Event
		want string
	}{
		{engine.Event{Reason: decision.ReasonContextDone}, "context_done"},
		{engine.Event{Reason: decision.ReasonNotIdempotent}, "not_idempotent"},
		{engine.Event{Reason: decision.ReasonAttemptsExhausted}, "attempts_exhausted"},
		{engine.Event{Reason: decision.ReasonBatchLogged}, "batch_logged"},
		{engine.Event{}, "not_retryable"},
	} {
		if got := refusalReason(c.ev); got != c.want {
			t.Errorf("%+v: %q, want %q", c.ev, got, c.want)
		}
	}
	if nextStep(engine.Event{Retrying: true, NextHost: true}) != decisionNextHost || nextStep(engine.Event{Retrying: true}) != decisionRetry {
		t.Error("nextStep")
	}
}

func TestOtelOptions(t *testing.T) {
	for _, o := range []Option{WithTracerProvider(nil), WithMeterProvider(nil), nil} {
		if _, err := New(testDriver, o); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("err = %v, want ErrInvalidOption", err)
		}
	}
	in, err := New(testDriver)
	if err != nil || in == nil {
		t.Fatalf("New() = %v, %v", in, err)
	}
	if _, err := New(Driver{Scope: "x"}); err == nil {
		t.Error("New accepted a driver without its functions")
	}
	// A nil Instrumentation records nothing and never panics.
	var nilIn *Instrumentation
	ctx, tr := nilIn.Begin(context.Background(), engine.Execution{Operation: "x"})
	if ctx == nil || tr != nil {
		t.Errorf("nil Begin = %v, %v", ctx, tr)
	}
	nilIn.ObserveQuery(context.Background(), "", nil, time.Time{}, time.Time{}, nil)
	nilIn.ObserveBatch(context.Background(), 0, nil, time.Time{}, time.Time{}, nil)
	if _, err := nilIn.ObserveClockOffset(nil); err == nil {
		t.Error("nil ObserveClockOffset: no error")
	}
}

func TestOtelStatusCode(t *testing.T) {
	in, err := New(testDriver)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := in.statusCode(errors.New("x")); ok {
		t.Error("a plain error has no status code")
	}
	if c, ok := in.statusCode(testServerError(0x1100)); !ok || c != "0x1100" {
		t.Errorf("write timeout: %q, %v; want 0x1100", c, ok)
	}
}
