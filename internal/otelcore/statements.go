package otelcore

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// maxStatements bounds the cache of statements: past it (statement texts without end,
// CQL with literals spliced in) each execution builds its own.
const maxStatements = 1024

// stmtKey is what an execution's statement-level attributes are made of: everything
// of a engine.Execution but the write timestamp. The verdict's reasons are in it only
// through idempotent: an execution that carries reasons is not cached (they may
// depend on bound values).
type stmtKey struct {
	operation, keyspace, statement string
	batch, idempotent              bool
}

// stmtInfo is what every execution of one statement shares, built once: its
// db.operation.name, the options its span starts with, and the attribute set of its
// measurements when it succeeds, with its attempts count. Without it each execution
// would parse its statement, build and box its span's attributes and look up its
// measurement set, allocating on the way, sampled or not.
type stmtInfo struct {
	key        stmtKey
	dbOp       string
	start      []trace.SpanStartOption // span kind and attributes; never appended to
	okAdd      []metric.AddOption      // the measurement set of a success, ready to pass
	okRecord   []metric.RecordOption
	okAttempts *atomic.Int64 // cqlsafe.attempts of a success
}

// statement returns x's stmtInfo, from the cache when it can.
func (in *Instrumentation) statement(x engine.Execution) *stmtInfo {
	cacheable := x.Idempotent || len(x.Reasons) == 0
	k := stmtKey{operation: x.Operation, keyspace: x.Keyspace, statement: x.Statement, batch: x.Batch, idempotent: x.Idempotent}
	if cacheable {
		if s, ok := in.stmts.load(k); ok {
			return s
		}
	}
	s := in.newStatement(k, x.Reasons)
	if !cacheable {
		return s
	}
	return in.stmts.store(k, s, maxStatements)
}

func (in *Instrumentation) newStatement(k stmtKey, reasons []string) *stmtInfo {
	op := operationName(k.statement, k.batch)
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, semconv.DBSystemNameCassandra, attrIdempotent.Bool(k.idempotent))
	if k.keyspace != "" {
		attrs = append(attrs, semconv.DBNamespace(k.keyspace))
	}
	if op != "" {
		attrs = append(attrs, semconv.DBOperationName(op))
	}
	if in.queryText && !k.idempotent && len(reasons) > 0 {
		// The verdict's reasons quote the clauses they are about (`counter update "c =
		// c + 100"`, literals included): statement text, recorded only when the text is.
		attrs = append(attrs, attrReasons.StringSlice(reasons))
	}
	if in.queryText && k.statement != "" {
		attrs = append(attrs, semconv.DBQueryText(k.statement))
	}
	okKey := measureKey{operation: k.operation, keyspace: k.keyspace, dbOp: op, class: decision.ClassNone.String()}
	ok := in.sets.get(okKey)
	return &stmtInfo{
		key:  k,
		dbOp: op,
		// Tracers copy the attributes of the options they are given (trace.NewSpanStartConfig).
		start:      []trace.SpanStartOption{in.spanKind, trace.WithAttributes(attrs...)},
		okAdd:      []metric.AddOption{ok},
		okRecord:   []metric.RecordOption{ok},
		okAttempts: in.attempts.get(okKey),
	}
}
