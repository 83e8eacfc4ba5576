package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

const lintHelp = `Classifies every CQL statement of each FILE ("-" for standard input) with
retry.Classify and schema statements with schema.Lint, and prints file:line, verdict and
reason. Exit status: 0 when every statement is idempotent and no schema error was found,
1 otherwise, 2 on a usage error or unreadable file.`

// lintStatement is one statement's verdict in --json output.
type lintStatement struct {
	File       string           `json:"file"`
	Line       int              `json:"line"`
	Statement  string           `json:"statement"`
	Kind       string           `json:"kind"`
	Idempotent bool             `json:"idempotent"`
	Reasons    []string         `json:"reasons"`
	Findings   []schema.Finding `json:"findings"`
}

func runLint(_ context.Context, args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs := newFlagSet("lint [--json] FILE...", stderr, lintHelp)
	asJSON := fs.Bool("json", false, "print a JSON array of statements with verdicts, reasons and findings")
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() == 0 {
		return usageError{fmt.Errorf("lint: name at least one FILE (or - for stdin)")}
	}
	var all []lintStatement
	for _, name := range fs.Args() {
		var text []byte
		var err error
		if name == "-" {
			text, err = io.ReadAll(stdin)
			name = "<stdin>"
		} else {
			text, err = os.ReadFile(name)
		}
		if err != nil {
			return usageError{fmt.Errorf("lint: %v", err)}
		}
		all = append(all, lintText(name, string(text))...)
	}
	bad := false
	for _, st := range all {
		if !st.Idempotent {
			bad = true
		}
		for _, f := range st.Findings {
			if f.Severity == schema.SeverityError {
				bad = true
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if all == nil {
			all = []lintStatement{}
		}
		if err := enc.Encode(all); err != nil {
			return err
		}
	} else {
		for _, st := range all {
			verdict := "ok"
			if !st.Idempotent {
				verdict = "NOT IDEMPOTENT"
			}
			fmt.Fprintf(stdout, "%s:%d: %s: %s\n", st.File, st.Line, verdict, oneLine(st.Statement))
			for _, r := range st.Reasons {
				fmt.Fprintf(stdout, "%s:%d:   reason: %s\n", st.File, st.Line, r)
			}
			for _, f := range st.Findings {
				if f.Rule == "not-idempotent" || f.Rule == "repeat-unsafe-ddl" {
					continue // already printed as reasons
				}
				fmt.Fprintf(stdout, "%s:%d:   %s [%s]: %s\n", st.File, f.Line, f.Severity, f.Rule, f.Message)
			}
		}
	}
	if bad {
		return exitError{code: 1}
	}
	return nil
}

func lintText(file, text string) []lintStatement {
	stmts, err := schema.Statements(text)
	if err != nil {
		f := schema.Lint(text)
		line := 1
		if len(f) > 0 {
			line = f[0].Line
		}
		return []lintStatement{{File: file, Line: line, Statement: "", Kind: "unknown", Reasons: []string{err.Error()}, Findings: f}}
	}
	findings := schema.Lint(text)
	out := make([]lintStatement, len(stmts))
	pos := 0
	for i, st := range stmts {
		at := strings.Index(text[pos:], st)
		line := strings.Count(text[:pos+max(at, 0)], "\n") + 1
		if at >= 0 {
			pos += at + len(st)
		}
		v := retry.Classify(st)
		out[i] = lintStatement{File: file, Line: line, Statement: st, Kind: v.Kind.String(), Idempotent: v.Idempotent,
			Reasons: v.Reasons, Findings: []schema.Finding{}}
		if out[i].Reasons == nil {
			out[i].Reasons = []string{}
		}
	}
	for _, f := range findings {
		if f.Statement >= 1 && f.Statement <= len(out) {
			out[f.Statement-1].Findings = append(out[f.Statement-1].Findings, f)
		}
	}
	return out
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = s[:87] + "…"
	}
	return s
}
