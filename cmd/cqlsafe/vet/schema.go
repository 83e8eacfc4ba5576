package vet

import (
	"fmt"
	"os"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
)

// Schema is what a .cql file tells the analyzer: column kinds (schema.ParseColumns) and
// each table's primary key columns, so that key columns are known.
type Schema struct {
	columns *schema.Columns
	// keys maps "table" and "keyspace.table" to the table's key columns; partition to
	// its partition key columns.
	keys      map[string]map[string]bool
	partition map[string][]string
}

// ParseSchema reads the CREATE TABLE statements of a .cql file's text.
func ParseSchema(ddl string) (*Schema, error) {
	cols, err := schema.ParseColumns(ddl)
	if err != nil {
		return nil, err
	}
	s := &Schema{columns: cols, keys: map[string]map[string]bool{}, partition: map[string][]string{}}
	stmts, err := schema.Statements(ddl)
	if err != nil {
		return nil, err
	}
	keyspace := ""
	for _, st := range stmts {
		toks, err := cqltext.Lex(st)
		if err != nil || len(toks) < 2 {
			continue
		}
		if toks[0].Is("use") {
			keyspace, _ = identName(toks[1])
			continue
		}
		if toks[0].Is("create") && (toks[1].Is("table") || toks[1].Is("columnfamily")) {
			s.addTable(toks[2:], keyspace)
		}
	}
	return s, nil
}

// LoadSchema reads a .cql file with ParseSchema.
func LoadSchema(path string) (*Schema, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vet: %w", err)
	}
	s, err := ParseSchema(string(b))
	if err != nil {
		return nil, fmt.Errorf("vet: %s: %w", path, err)
	}
	return s, nil
}

func (s *Schema) addTable(toks []cqltext.Token, keyspace string) {
	p := &parser{toks: toks, s: &statement{}, n: new(int)}
	if p.peek().Is("if") {
		p.i += 3 // IF NOT EXISTS
	}
	if !p.table() {
		return
	}
	if p.s.keyspace != "" {
		keyspace = p.s.keyspace
	}
	defs, ok := p.group()
	if !ok {
		return
	}
	var partition, clustering []string
	for _, d := range defs {
		if len(d) >= 3 && d[0].Is("primary") && d[1].Is("key") {
			parts := splitTop(stripParens(d[2:]), ",")
			for k, part := range parts {
				names := names(stripParens(part))
				if k == 0 {
					partition = names
				} else {
					clustering = append(clustering, names...)
				}
			}
			continue
		}
		if len(d) >= 3 && d[len(d)-2].Is("primary") && d[len(d)-1].Is("key") {
			if name, ok := identName(d[0]); ok {
				partition = []string{name}
			}
		}
	}
	keys := map[string]bool{}
	for _, k := range append(append([]string{}, partition...), clustering...) {
		keys[k] = true
	}
	for _, name := range []string{p.s.table, keyspace + "." + p.s.table} {
		s.keys[name] = keys
		s.partition[name] = partition
	}
}

// stripParens removes one pair of enclosing parentheses.
func stripParens(toks []cqltext.Token) []cqltext.Token {
	if len(toks) >= 2 && toks[0].IsPunct("(") && toks[len(toks)-1].IsPunct(")") {
		return toks[1 : len(toks)-1]
	}
	return toks
}

func names(toks []cqltext.Token) []string {
	var out []string
	for _, t := range toks {
		if n, ok := identName(t); ok {
			out = append(out, n)
		}
	}
	return out
}

type columnKind int

const (
	kindUnknown columnKind = iota
	kindCounter
	kindList
	kindOther
)

// kind is the kind of st's column; a nil Schema knows nothing.
func (s *Schema) kind(st *statement, column string) columnKind {
	if s == nil {
		return kindUnknown
	}
	switch s.columns.ColumnKind(st.keyspace, st.table, column) {
	case retry.ColumnUnknown:
		return kindUnknown
	case retry.ColumnCounter:
		return kindCounter
	case retry.ColumnList:
		return kindList
	}
	return kindOther
}

// isKey reports whether column is in st's table's primary key: (known, key).
func (s *Schema) isKey(st *statement, column string) (bool, bool) {
	if s == nil {
		return false, false
	}
	keys, ok := s.keys[st.qualified()]
	if !ok {
		keys, ok = s.keys[st.table]
	}
	if !ok {
		return false, false
	}
	return true, keys[column]
}

// partitionKey returns st's table's partition key columns, or nil.
func (s *Schema) partitionKey(st *statement) []string {
	if s == nil {
		return nil
	}
	if p, ok := s.partition[st.qualified()]; ok {
		return p
	}
	return s.partition[st.table]
}

func (s *Schema) retrySchema() retry.Schema {
	if s == nil {
		return nil
	}
	return s.columns
}
