package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/verdict"
)

// TestAgainOnNoConnection: a driver that found no connection asks no retry policy, so
// Exec.Again decides it: run again, within the attempt limit (each counted), with the
// backoff waited; never for another error, never after the context ended. A write that
// may have applied earlier stays an unknown outcome if the last run finds no host.
func TestAgainOnNoConnection(t *testing.T) {
	noHost, lost := errors.New("no connection"), errors.New("no response")
	facts := func(err error) decision.Facts {
		switch {
		case errors.Is(err, noHost):
			return decision.Facts{Class: decision.ClassNoHost}
		case errors.Is(err, lost):
			return decision.Facts{Class: decision.ClassClientTimeout}
		}
		return decision.Facts{Class: decision.ClassFatal}
	}
	cfg := Defaults()
	cfg.MaxAttempts, cfg.BaseDelay, cfg.MaxDelay, cfg.Jitter = 3, 10*time.Millisecond, 10*time.Millisecond, false
	e := New(&cfg, facts)
	insert := verdict.Classify("INSERT INTO t (id, v) VALUES (1, 'x')")
	counter := verdict.Classify("UPDATE c SET n = n + 1 WHERE id = 1")

	t.Run("bounded by the attempt limit", func(t *testing.T) {
		x := e.NewExec(context.Background(), counter, "UPDATE")
		start := time.Now()
		runs := 1
		for x.Again(noHost) {
			runs++
		}
		if runs != 3 || x.Attempts() != 3 {
			t.Errorf("runs = %d, attempts = %d; want 3 and 3 (the limit)", runs, x.Attempts())
		}
		if d := time.Since(start); d < 20*time.Millisecond {
			t.Errorf("ran again after %v: the backoff (10ms twice) was not waited", d)
		}
		if unknown, _, _ := x.Unknown(noHost, 1); unknown {
			t.Errorf("nothing was ever sent: the outcome is known (not applied)")
		}
	})
	t.Run("other errors are the driver's retry policy's", func(t *testing.T) {
		x := e.NewExec(context.Background(), insert, "INSERT")
		if x.Again(lost) || x.Again(errors.New("syntax")) || x.Attempts() != 0 {
			t.Errorf("Again decided an error the driver shows its retry policy (attempts %d)", x.Attempts())
		}
	})
	t.Run("context ended", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		x := e.NewExec(ctx, insert, "INSERT")
		if x.Again(noHost) {
			t.Errorf("ran again after the context ended")
		}
	})
	t.Run("earlier attempt may have applied", func(t *testing.T) {
		x := e.NewExec(context.Background(), insert, "INSERT")
		x.OnAttempt()
		if retry, _ := x.OnError(lost); !retry {
			t.Fatal("an idempotent pinned insert after a lost response: not retried")
		}
		for x.Again(noHost) {
		}
		if unknown, _, _ := x.Unknown(noHost, 1); !unknown {
			t.Errorf("the first attempt may have applied; the final no-connection error must not say it did not")
		}
	})
}
