package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
)

// ErrNotIdempotentDDL is returned by Apply for a statement that would fail or change
// something when applied twice (CREATE without IF NOT EXISTS, ALTER … ADD, TRUNCATE…).
var ErrNotIdempotentDDL = errors.New("schema: statement is not safe to apply repeatedly")

// ErrNoAgreement is returned by Apply when the nodes did not agree on one schema version
// after a statement within its 2 minutes (a node down or restarting): the statement ran,
// and running Apply again once the nodes are up is safe.
var ErrNoAgreement = errors.New("schema: nodes did not agree on the schema")

// Statements splits CQL text into statements (comments dropped, text otherwise as
// written), for Apply and Lint.
func Statements(cql string) ([]string, error) {
	toks, err := cqltext.Lex(cql)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	var out []string
	for _, st := range cqltext.Split(toks) {
		out = append(out, cql[st[0].Pos:st[len(st)-1].End])
	}
	return out, nil
}

// Apply runs each statement of cql in order and waits for schema agreement after each
// (up to 2 minutes a statement). Every statement must be safe to repeat — CREATE … IF NOT
// EXISTS, DROP … IF EXISTS, ALTER … WITH — or Apply refuses it before running anything
// (ErrNotIdempotentDDL). So several processes may Apply the same schema at once, and a
// retried Apply finishes the job. Schema changes are not retried after a timeout
// automatically: Apply returns the error and running it again is safe.
func Apply(ctx context.Context, s *gocql.Session, cql string) error {
	stmts, err := Statements(cql)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if v := retry.Classify(st); !v.Idempotent {
			return fmt.Errorf("%w: %s: %s", ErrNotIdempotentDDL, firstLine(st), strings.Join(v.Reasons, "; "))
		}
	}
	for _, st := range stmts {
		if err := s.Query(st).WithContext(ctx).Idempotent(true).Exec(); err != nil {
			var exists *gocql.RequestErrAlreadyExists
			if !errors.As(err, &exists) {
				return fmt.Errorf("schema: %s: %w", firstLine(st), err)
			}
		}
		actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := s.AwaitSchemaAgreement(actx)
		cancel()
		if err != nil {
			return fmt.Errorf("%w after %s: %w", ErrNoAgreement, firstLine(st), err)
		}
	}
	return nil
}

// ApplyTemplate renders the named template and applies it.
func ApplyTemplate(ctx context.Context, s *gocql.Session, name string, p Params) error {
	cql, err := Render(name, p)
	if err != nil {
		return err
	}
	return Apply(ctx, s, cql)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 80 {
		s = s[:77] + "…"
	}
	return s
}
