package main

import (
	"context"
	"encoding/json"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/cqlsafe/cqlsafe/cmd/cqlsafe/vet"
)

const vetHelp = `Loads the Go packages (default ./..., test files included) and reports Cassandra
writes that are unsafe to retry, at the line where they are: one line per finding,
file:line:column: rule: why; fix: how. Rules: not-idempotent, rollback,
null-not-unset, server-nondeterminism, unpinned-timestamp, list-assignment (see
"go doc github.com/cqlsafe/cqlsafe/cmd/cqlsafe/vet").

A comment "//cqlsafe:ignore RULE reason" on the line, or on the line above, silences
RULE there. The same analyzer runs under go vet:

  go vet -vettool=$(which cqlsafevet) ./...

With -v it also lists what it could not analyse (rule "not-analysed", in --json too):
Query/Bind calls whose CQL is built at run time; wrappers — functions that pass
their own CQL parameter on to the driver, whose statements are at their callers; and
writes whose CQL was read but that are executed by another function (a batch parameter,
a query passed on), whose retry policy and timestamp were not checked; gocqlx table
models whose Metadata is not a constant. Each note ends with the retry in force at the
site ([retried: …], [not retried: …], [marked Idempotent(true)], [not known: …]);
writes and sites that may write come first, reads in a section of their own (the
sections' headings go to stderr: every line on stdout is file:line:col: …). --json
carries the same as "kind" (write, read) and "retry". These notes do not change the
exit status.

Exit status: 0 when nothing was found, 1 when something was, 2 on a usage error, an
unreadable --schema file or packages that do not load.`

// vetFinding is one diagnostic in --json output.
type vetFinding struct {
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Column  int      `json:"column"`
	Rule    string   `json:"rule"`
	Message string   `json:"message"`
	Fixes   []string `json:"fixes,omitempty"`
	// Not-analysed notes only: "write", "read" or "" (not known), and the retry in
	// force at the site.
	Kind  string `json:"kind,omitempty"`
	Retry string `json:"retry,omitempty"`
}

func runVet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("vet [--json] [--schema FILE.cql] [packages]", stderr, vetHelp)
	asJSON := fs.Bool("json", false, "print a JSON array of findings")
	schemaFile := fs.String("schema", "", "CQL file whose CREATE TABLE statements give column kinds and primary keys")
	verbose := fs.Bool("v", false, "also list the driver calls whose CQL was not analysed (rule not-analysed)")
	if err := fs.Parse(args); err != nil {
		return flagErr(fs, err)
	}
	var sch *vet.Schema
	if *schemaFile != "" {
		var err error
		if sch, err = vet.LoadSchema(*schemaFile); err != nil {
			return usageError{err}
		}
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	cfg := &packages.Config{Context: ctx, Mode: packages.LoadAllSyntax, Tests: true}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return usageError{fmt.Errorf("vet: %w", err)}
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		return usageError{fmt.Errorf("vet: %d errors loading packages", n)}
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{vet.New(sch)}, pkgs, nil)
	if err != nil {
		return fmt.Errorf("vet: %w", err)
	}
	wd, _ := os.Getwd()
	findings, notes := []vetFinding{}, []vetFinding{}
	seen := map[string]bool{} // a file is in a package and in its test variant
	for _, act := range graph.Roots {
		if act.Err != nil {
			return fmt.Errorf("vet: %s: %w", act.Package.PkgPath, act.Err)
		}
		add := func(pos token.Pos, rule, msg string, fixes []analysis.SuggestedFix, kind, retry string) {
			p := act.Package.Fset.Position(pos)
			name := p.Filename
			if rel, err := filepath.Rel(wd, name); err == nil && filepath.IsLocal(rel) {
				name = rel
			}
			key := fmt.Sprintf("%s:%d:%d:%s", name, p.Line, p.Column, msg)
			if seen[key] {
				return
			}
			seen[key] = true
			f := vetFinding{File: name, Line: p.Line, Column: p.Column, Rule: rule, Message: msg, Kind: kind, Retry: retry}
			for _, fix := range fixes {
				f.Fixes = append(f.Fixes, fix.Message)
			}
			if rule == vet.RuleNotAnalysed {
				notes = append(notes, f)
			} else {
				findings = append(findings, f)
			}
		}
		for _, d := range act.Diagnostics {
			add(d.Pos, d.Category, d.Message, d.SuggestedFixes, "", "")
		}
		if res, ok := act.Result.(*vet.Result); ok && *verbose {
			for _, n := range res.NotAnalysed {
				add(n.Pos, vet.RuleNotAnalysed, vet.RuleNotAnalysed+": "+n.Reason, nil, n.Kind, n.Retry)
			}
		}
	}
	found := len(findings)
	byPlace := func(xs []vetFinding) {
		sort.Slice(xs, func(i, j int) bool {
			a, b := xs[i], xs[j]
			if a.File != b.File {
				return a.File < b.File
			}
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Column < b.Column
		})
	}
	byPlace(findings)
	// Notes on writes (and sites that may write) first; reads, which a retry cannot
	// apply twice, in a section of their own.
	var writes, reads []vetFinding
	for _, n := range notes {
		if n.Kind == "read" {
			reads = append(reads, n)
		} else {
			writes = append(writes, n)
		}
	}
	byPlace(writes)
	byPlace(reads)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(append(append(findings, writes...), reads...)); err != nil {
			return err
		}
	} else {
		printVetText(stdout, stderr, findings, writes, reads)
	}
	if found > 0 {
		return exitError{1}
	}
	return nil
}

// printVetText writes the findings, then the notes on writes and on reads, one
// file:line:col: line each on stdout; the notes' section headings go to stderr, so that
// every line on stdout parses as file:line:col.
func printVetText(stdout, stderr io.Writer, findings, writes, reads []vetFinding) {
	for _, f := range findings {
		fmt.Fprintf(stdout, "%s:%d:%d: %s\n", f.File, f.Line, f.Column, f.Message)
	}
	section := func(head string, notes []vetFinding) {
		if len(notes) == 0 {
			return
		}
		fmt.Fprintln(stderr, head)
		for _, f := range notes {
			fmt.Fprintf(stdout, "%s:%d:%d: %s [%s]\n", f.File, f.Line, f.Column, f.Message, f.Retry)
		}
	}
	section(fmt.Sprintf("# not analysed: %d writes, or sites that may write", len(writes)), writes)
	section(fmt.Sprintf("# not analysed: %d reads (a retried read changes nothing)", len(reads)), reads)
}
