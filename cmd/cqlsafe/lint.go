package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

const lintHelp = `Classifies every CQL statement of each FILE ("-" for standard input) with
retry's classifier and schema statements with schema.Lint, and prints file:line, verdict
and reason.

Column types make the verdicts precise. Without them lint cannot tell a set or map from a
counter or list ("s = s + ?" is reported), and it passes a bind marker assigned whole to
a column ("SET l = ?", "VALUES (?)"), which is not repeatable when the column is a
non-frozen list: Cassandra keys list elements by server time, so a repeat appends a
second copy. Give the types with one of:

  --schema FILE.cql   the file's CREATE TABLE statements (USE, ALTER TABLE … ADD/DROP
                      and DROP TABLE followed; tables without keyspace match any)
  --hosts host:port   a running cluster's schema metadata (with the connection flags;
                      lint never reads $CQLSAFE_CASSANDRA_HOSTS on its own)

--keyspace is the keyspace of statements that name none (a USE in FILE changes it for
the statements after it). With column types, a bind marker whose column they do not
know is printed as a note: check the table's name.

A statement Cassandra's grammar refuses (SELECT, INSERT, UPDATE, DELETE, BATCH, USE,
TRUNCATE are parsed) is reported at its line and column and nothing is judged; with
--hosts, so is a table the cluster does not have.

Exit status: 0 when every statement is repeatable and no schema error was found, 1
otherwise, 2 on a usage error, an unreadable FILE, a statement Cassandra would refuse,
or column types that cannot be read (a malformed --schema file, an unreachable cluster).`

// lintStatement is one statement's verdict in --json output.
type lintStatement struct {
	File       string   `json:"file"`
	Line       int      `json:"line"`
	Statement  string   `json:"statement"`
	Kind       string   `json:"kind"`
	Idempotent bool     `json:"idempotent"`
	Reasons    []string `json:"reasons"`
	// Hazards are what the statement does wrong even run once (a range DELETE whose
	// uuid() is evaluated once per bound): each is also a reason.
	Hazards  []string         `json:"hazards"`
	Findings []schema.Finding `json:"findings"`
	// Conditions are the bind markers of a repeatable statement whose value still
	// decides it: bound to a column of unknown type, a non-empty list is not repeatable.
	Conditions []string `json:"conditions"`

	syntax   string      // what Cassandra's grammar refuses: "line:col: reason"
	keyspace string      // of the statement's tables that name none
	tables   [][2]string // the tables it reads or writes: keyspace (or ""), table
}

func runLint(ctx context.Context, args []string, stdout, stderr io.Writer, stdin io.Reader) error {
	fs := newFlagSet("lint [--json] [--schema FILE.cql | --hosts host:port [--keyspace ks]] FILE...", stderr, lintHelp)
	asJSON := fs.Bool("json", false, "print a JSON array of statements with verdicts, reasons, findings and conditions")
	schemaFile := fs.String("schema", "", "CQL file whose CREATE TABLE statements give the column types")
	var conn connFlags
	conn.register(fs, "keyspace of statements that name none (and the session's, with --hosts)")
	// Lint stays offline unless asked: the environment's cluster is for the commands
	// that need one.
	conn.hosts = ""
	if f := fs.Lookup("hosts"); f != nil {
		f.DefValue = ""
		f.Usage = "read the column types from this cluster: host:port[,host:port]"
	}
	if err := fs.Parse(args); err != nil {
		return flagErr(fs, err)
	}
	hostsGiven := false
	fs.Visit(func(f *flag.Flag) { hostsGiven = hostsGiven || f.Name == "hosts" })
	if fs.NArg() == 0 {
		return usageError{fmt.Errorf("lint: name at least one FILE (or - for stdin)")}
	}
	if hostsGiven && *schemaFile != "" {
		return usageError{fmt.Errorf("lint: give --schema or --hosts, not both")}
	}
	type input struct{ name, text string }
	var inputs []input
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
		inputs = append(inputs, input{name, string(text)})
	}
	// Input that is not CQL is said before anything connects: a silent host would
	// otherwise hold that one line back for --timeout.
	pre := judge{keyspace: conn.keyspace, policy: retry.NewPolicy()}
	for _, in := range inputs {
		if err := notCQL(in.name, pre.text(in.name, in.text)); err != nil {
			return err
		}
	}
	j := judge{keyspace: conn.keyspace}
	var opts []retry.Option
	var sess *gocql.Session // with --hosts: tables are looked up there
	switch {
	case *schemaFile != "":
		cols, err := readColumns(*schemaFile)
		if err != nil {
			return err
		}
		opts, j.typed = append(opts, retry.WithSchema(cols)), true
	case hostsGiven:
		s, err := conn.session(ctx)
		if err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				return err
			}
			return usageError{fmt.Errorf("lint: %w", err)} // no column types: exit 2, not a finding
		}
		defer s.Close()
		sess = s
		opts, j.typed = append(opts, retry.WithSchema(retry.SessionSchema(s))), true
	}
	j.policy = retry.NewPolicy(opts...)
	var all []lintStatement
	for _, in := range inputs {
		sts := j.text(in.name, in.text)
		if err := notCQL(in.name, sts); err != nil {
			return err
		}
		all = append(all, sts...)
	}
	// What Cassandra would refuse is not judged: exit 2, each error at its position.
	refused := false
	for _, st := range all {
		if st.syntax != "" {
			fmt.Fprintf(stderr, "%s:%s\n", st.File, st.syntax)
			refused = true
		}
	}
	if !refused && sess != nil {
		// With a cluster, a table it does not have is an error too.
		for _, st := range all {
			for _, tb := range st.tables {
				ks := tb[0]
				if ks == "" {
					ks = st.keyspace
				}
				if ks == "" {
					continue // no keyspace to look in (none named, no USE, no --keyspace)
				}
				_, ok, err := cqlvalue.Table(sess, ks, tb[1])
				switch {
				case err != nil && !errors.Is(err, gocql.ErrKeyspaceDoesNotExist):
					return fmt.Errorf("lint: read the schema of %s: %w", ks, err)
				case err != nil || !ok:
					fmt.Fprintf(stderr, "%s:%d: table %s.%s does not exist on %s\n", st.File, st.Line, ks, tb[1], conn.hosts)
					refused = true
				}
			}
		}
	}
	if refused {
		return exitError{code: 2}
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
			switch {
			case len(st.Hazards) > 0:
				verdict = "DESTRUCTIVE"
			case !st.Idempotent:
				verdict = "NOT IDEMPOTENT"
			}
			fmt.Fprintf(stdout, "%s:%d: %s: %s\n", st.File, st.Line, verdict, oneLine(st.Statement))
			for _, h := range st.Hazards {
				fmt.Fprintf(stdout, "%s:%d:   hazard: %s\n", st.File, st.Line, h)
			}
			for _, r := range st.Reasons {
				if !slices.Contains(st.Hazards, r) {
					fmt.Fprintf(stdout, "%s:%d:   reason: %s\n", st.File, st.Line, r)
				}
			}
			for _, f := range st.Findings {
				if f.Rule == "not-idempotent" || f.Rule == "repeat-unsafe-ddl" {
					continue // already printed as reasons
				}
				fmt.Fprintf(stdout, "%s:%d:   %s [%s]: %s\n", st.File, f.Line, f.Severity, f.Rule, f.Message)
			}
			if j.typed {
				// Without column types every marker is a condition: printing them would
				// bury the findings.
				for _, c := range st.Conditions {
					fmt.Fprintf(stdout, "%s:%d:   note: %s\n", st.File, st.Line, c)
				}
			}
		}
	}
	if bad {
		return exitError{code: 1}
	}
	return nil
}

// notCQL is the usage error for a file none of whose statements is CQL (a wrong file
// named, prose, a binary): one line, exit 2, rather than a "NOT IDEMPOTENT" per line.
func notCQL(file string, sts []lintStatement) error {
	if len(sts) == 0 {
		return nil
	}
	for _, st := range sts {
		if st.Kind != retry.KindUnknown.String() {
			return nil
		}
	}
	why := "no statement recognised"
	if len(sts[0].Reasons) > 0 {
		why = sts[0].Reasons[0]
	}
	return usageError{fmt.Errorf("lint: %s is not CQL: line %d: %s", file, sts[0].Line, oneLine(why))}
}

// readColumns reads --schema's column types; a malformed file is a usage error that
// points at the line.
func readColumns(file string) (*schema.Columns, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return nil, usageError{fmt.Errorf("lint: --schema: %v", err)}
	}
	cols, err := schema.ParseColumns(string(text))
	var de *schema.DDLError
	switch {
	case errors.As(err, &de):
		return nil, usageError{fmt.Errorf("lint: --schema %s:%d:%d: %s", file, de.Line, de.Column, de.Reason)}
	case err != nil:
		return nil, usageError{fmt.Errorf("lint: --schema %s: %w", file, err)}
	case cols.Tables() == 0:
		return nil, usageError{fmt.Errorf("lint: --schema %s has no CREATE TABLE: it gives no column types", file)}
	}
	return cols, nil
}

// judge classifies statements the way a Policy with the same column types would.
type judge struct {
	policy   *retry.Policy
	keyspace string // of statements that name none, until a USE
	typed    bool   // column types given (--schema or --hosts)
}

func (j judge) text(file, text string) []lintStatement {
	stmts, err := schema.Statements(text)
	if err != nil {
		f := schema.Lint(text)
		line := 1
		if len(f) > 0 {
			line = f[0].Line
		}
		return []lintStatement{{File: file, Line: line, Statement: "", Kind: "unknown", Reasons: []string{err.Error()}, Hazards: []string{}, Findings: f, Conditions: []string{}}}
	}
	keyspace := j.keyspace
	out := make([]lintStatement, len(stmts))
	pos := 0
	for i, st := range stmts {
		at := strings.Index(text[pos:], st)
		line := strings.Count(text[:pos+max(at, 0)], "\n") + 1
		if at >= 0 {
			pos += at + len(st)
		}
		toks, _ := cqltext.Lex(st) // lexed already as part of text
		if len(toks) == 2 && toks[0].Is("use") {
			keyspace = identName(toks[1])
		}
		start := pos - len(st) // the statement's offset in text
		if at < 0 {
			start = 0
		}
		var syntax string
		if se := cqltext.CheckSyntax(toks); se != nil {
			off := start + se.Pos
			l := strings.Count(text[:off], "\n") + 1
			c := off - strings.LastIndex(text[:off], "\n")
			syntax = fmt.Sprintf("%d:%d: syntax error: %s", l, c, se.Reason)
		}
		v := j.policy.Lint(keyspace, st)
		out[i] = lintStatement{File: file, Line: line, Statement: st, Kind: v.Kind.String(), Idempotent: v.Idempotent,
			Reasons: v.Reasons, Hazards: v.Hazards, Findings: []schema.Finding{}, Conditions: []string{}, syntax: syntax,
			keyspace: keyspace, tables: dataTables(toks)}
		if out[i].Reasons == nil {
			out[i].Reasons = []string{}
		}
		if out[i].Hazards == nil {
			out[i].Hazards = []string{}
		}
		if v.Idempotent {
			out[i].Conditions = append(out[i].Conditions, v.ValueConditions()...)
		} else if v.Kind != retry.KindSchema {
			// schema.Lint judged this statement without column types: the verdict here
			// replaces its not-idempotent findings.
			for _, r := range v.Reasons {
				out[i].Findings = append(out[i].Findings, schema.Finding{Statement: i + 1, Line: line,
					Severity: schema.SeverityError, Rule: "not-idempotent", Message: r})
			}
		}
	}
	for _, f := range schema.Lint(text) {
		if f.Rule == "not-idempotent" {
			continue
		}
		if f.Statement >= 1 && f.Statement <= len(out) {
			out[f.Statement-1].Findings = append(out[f.Statement-1].Findings, f)
		}
	}
	return out
}

// dataTables are the tables a data statement (SELECT, INSERT, UPDATE, DELETE, a batch of
// them) names: after INTO, FROM, and UPDATE.
func dataTables(toks []cqltext.Token) [][2]string {
	if len(toks) == 0 || !(toks[0].Is("select") || toks[0].Is("insert") || toks[0].Is("update") || toks[0].Is("delete") || toks[0].Is("begin")) {
		return nil
	}
	var out [][2]string
	for i, t := range toks {
		// UPDATE begins a statement: the first, or one in a batch (update is reserved:
		// never an unquoted name).
		update := t.Is("update") && (i == 0 || toks[0].Is("begin"))
		if t.Is("into") || t.Is("from") || update {
			if ks, tb := cqltext.TableName(toks, i+1); tb != "" {
				out = append(out, [2]string{ks, tb})
			}
		}
	}
	return out
}

// identName is a keyspace name as Cassandra stores it: quoted as written, unquoted
// lower-cased.
func identName(t cqltext.Token) string {
	if t.Kind == cqltext.QIdent {
		return t.Text
	}
	return t.Lower
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = s[:87] + "…"
	}
	return s
}
