package harness

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/wait"
)

// TraceResult is what Cassandra's query trace says a read touched.
type TraceResult struct {
	// Rows is the number of rows the client received.
	Rows int
	// LiveRows and TombstoneCells add up Cassandra's "Read N live rows and M tombstone
	// cells" trace events over every page of the read.
	LiveRows       int
	TombstoneCells int
	// Activities are the raw trace events, in order, for diagnostics.
	Activities []string
}

var readEvent = regexp.MustCompile(`Read (\d+) live rows and (\d+) tombstone cells`)

type idTracer struct {
	mu  sync.Mutex
	ids [][]byte
}

func (t *idTracer) Trace(id []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ids = append(t.ids, append([]byte(nil), id...))
}

// TraceRead runs a read with tracing on, consumes every row (all pages), waits until
// Cassandra has finished writing each trace session, and returns the live-row and
// tombstone-cell counts the trace reports. Trace tables are read at consistency ONE.
func TraceRead(ctx context.Context, s *gocql.Session, stmt string, values ...any) (TraceResult, error) {
	var res TraceResult
	tr := &idTracer{}
	iter := s.Query(stmt, values...).WithContext(ctx).Trace(tr).Iter()
	for iter.Scanner().Next() {
		res.Rows++
	}
	if err := iter.Close(); err != nil {
		return res, fmt.Errorf("harness: traced read: %w", err)
	}
	tr.mu.Lock()
	ids := tr.ids
	tr.mu.Unlock()
	if len(ids) == 0 {
		return res, fmt.Errorf("harness: traced read returned no trace id")
	}
	for _, id := range ids {
		acts, err := traceEvents(ctx, s, id)
		if err != nil {
			return res, err
		}
		res.Activities = append(res.Activities, acts...)
	}
	for _, a := range res.Activities {
		if m := readEvent.FindStringSubmatch(a); m != nil {
			live, _ := strconv.Atoi(m[1])
			tomb, _ := strconv.Atoi(m[2])
			res.LiveRows += live
			res.TombstoneCells += tomb
		}
	}
	return res, nil
}

// traceEvents waits for the trace session to complete (duration set), then until its
// events stop arriving (they are written asynchronously), and returns them.
func traceEvents(ctx context.Context, s *gocql.Session, id []byte) ([]string, error) {
	var sid gocql.UUID
	copy(sid[:], id)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var duration *int
		err := s.Query(`SELECT duration FROM system_traces.sessions WHERE session_id = ?`, sid).
			WithContext(ctx).Consistency(gocql.One).Scan(&duration)
		if err == nil && duration != nil {
			break
		}
		if err != nil && err != gocql.ErrNotFound {
			return nil, fmt.Errorf("harness: trace session %s: %w", sid, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("harness: trace session %s did not complete", sid)
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return nil, err
		}
	}
	prev := -1
	for {
		var acts []string
		iter := s.Query(`SELECT activity FROM system_traces.events WHERE session_id = ?`, sid).
			WithContext(ctx).Consistency(gocql.One).Iter()
		var a string
		for iter.Scan(&a) {
			acts = append(acts, a)
		}
		if err := iter.Close(); err != nil {
			return nil, fmt.Errorf("harness: trace events %s: %w", sid, err)
		}
		if len(acts) == prev || time.Now().After(deadline) {
			return acts, nil
		}
		prev = len(acts)
		if err := sleep(ctx, 150*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error { return wait.Sleep(ctx, d) }
