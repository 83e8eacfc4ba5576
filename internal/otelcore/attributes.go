package otelcore

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/cqlsafe/cqlsafe/internal/core/decision"
	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

// Attribute keys of our own; the database ones come from semconv.
const (
	attrOperation  = attribute.Key("cqlsafe.operation")
	attrTimestamp  = attribute.Key("cqlsafe.timestamp")
	attrIdempotent = attribute.Key("cqlsafe.idempotent")
	attrReasons    = attribute.Key("cqlsafe.not_idempotent.reasons")
	attrAttempts   = attribute.Key("cqlsafe.attempts")
	attrOutcome    = attribute.Key("cqlsafe.outcome")
	attrAttempt    = attribute.Key("cqlsafe.attempt")
	attrLatency    = attribute.Key("cqlsafe.latency_ms")
	attrDecision   = attribute.Key("cqlsafe.decision")
	attrBackoff    = attribute.Key("cqlsafe.backoff_ms")
	attrReason     = attribute.Key("cqlsafe.refusal.reason")
	attrWhy        = attribute.Key("cqlsafe.why")
	attrHedges     = attribute.Key("cqlsafe.hedges")
	attrHedge      = attribute.Key("cqlsafe.attempt.hedge")

	attrSettleKind       = attribute.Key("cqlsafe.settle.kind")
	attrSettleOutcome    = attribute.Key("cqlsafe.settle.outcome")
	attrSettleStatements = attribute.Key("cqlsafe.settle.statements")
	attrSettleElapsed    = attribute.Key("cqlsafe.settle.elapsed_ms")
)

// Span event names.
const (
	eventAttempt = "attempt"
	eventSettle  = "settle"
)

// Values of cqlsafe.outcome.
const (
	outcomeOK      = "ok"
	outcomeFailed  = "failed"
	outcomeUnknown = "unknown" // the driver's *retry.OutcomeUnknownError (Driver.OutcomeUnknown): may or may not have applied
)

// Values of cqlsafe.decision.
const (
	decisionRetry    = "retry"
	decisionNextHost = "next_host"
	decisionRefuse   = "refuse"
)

// nextStep says where the Policy sends a retry (engine.Event.NextHost).
func nextStep(ev engine.Event) string {
	if ev.NextHost {
		return decisionNextHost
	}
	return decisionRetry
}

// refusalReason is cqlsafe.refusal.reason: retry's own fixed set (retry.Reason), so the
// refusals counter stays small.
func refusalReason(ev engine.Event) string {
	if ev.Reason == "" {
		return string(decision.ReasonNotRetryable)
	}
	return string(ev.Reason)
}

// statusCode is db.response.status_code: the protocol error code Cassandra answered
// with, in hex as the protocol spec writes it (0x1100 write timeout).
func (in *Instrumentation) statusCode(err error) (string, bool) {
	code, ok := in.driver.StatusCode(err)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("0x%04X", code), true
}

// operationName is db.operation.name for a statement: its first keyword when it is one
// of a fixed set, else "" (not set). A batch (its statements one per line) is
// "BATCH INSERT" when every line is an INSERT — likewise UPDATE, DELETE —, else "BATCH",
// as the semantic conventions ask.
func operationName(stmt string, batch bool) string {
	if !batch {
		return keyword(stmt)
	}
	op := ""
	for line := range strings.SplitSeq(stmt, "\n") {
		k := keyword(line)
		if k == "" || k == "BATCH" || (op != "" && k != op) {
			return "BATCH"
		}
		op = k
	}
	if op == "" {
		return "BATCH"
	}
	return "BATCH " + op
}

// keyword is the statement's first keyword, upper case, if it is one we name.
func keyword(stmt string) string {
	s := skipSpaceAndComments(stmt)
	end := 0
	for end < len(s) && isLetter(s[end]) {
		end++
	}
	switch w := strings.ToUpper(s[:end]); w {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE":
		return w
	case "BEGIN":
		return "BATCH" // BEGIN [UNLOGGED | COUNTER] BATCH … APPLY BATCH
	}
	return ""
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// skipSpaceAndComments drops leading white space and CQL comments (--, //, /* */).
func skipSpaceAndComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		switch {
		case strings.HasPrefix(s, "--"), strings.HasPrefix(s, "//"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "/*"):
			i := strings.Index(s[2:], "*/")
			if i < 0 {
				return ""
			}
			s = s[2+i+2:]
		default:
			return s
		}
	}
}
