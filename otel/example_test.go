package cqlsafeotel_test

import (
	"context"
	"fmt"

	"github.com/gocql/gocql"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	cqlsafeotel "github.com/cqlsafe/cqlsafe/otel"
	"github.com/cqlsafe/cqlsafe/retry"
)

// Wire the Instrumentation into the cluster's observers (chained with the ones it
// has) and into the retry Policy. Here the spans go to an in-memory recorder; in an
// application, to the TracerProvider its exporter is set up with.
func Example() {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	inst, err := cqlsafeotel.New(cqlsafeotel.WithTracerProvider(tp))
	if err != nil {
		panic(err)
	}
	cluster := gocql.NewCluster("127.0.0.1:9042")
	cluster.QueryObserver = inst.QueryObserver(cluster.QueryObserver)
	cluster.BatchObserver = inst.BatchObserver(cluster.BatchObserver)
	policy := retry.NewPolicy(retry.WithTracer(inst))
	// session, err := cluster.CreateSession()
	// err = policy.Exec(ctx, session.Query(`INSERT INTO kv (id, v) VALUES (?, ?)`, id, v))

	// Without a cluster at hand: retry.Do's own span.
	err = retry.Do(context.Background(), func(context.Context) error { return nil }, retry.WithPolicy(policy))
	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanKind(), err)
	}
	// Output: retry.Do client <nil>
}
