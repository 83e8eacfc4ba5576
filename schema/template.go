package schema

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
)

//go:embed templates/*.cql
var files embed.FS

// Sentinels for Render.
var (
	ErrUnknownTemplate = errors.New("schema: unknown template")
	ErrBadParams       = errors.New("schema: invalid parameters")
)

// Template describes one embedded template.
type Template struct {
	Name         string // e.g. "eventlog"
	DefaultTable string // the table name used when Params.Table is empty
	Summary      string // the first sentence of the leading comment
}

var defaultTables = map[string]string{
	"keyspace": "", "eventlog": "events", "attributes": "attributes",
	"tombstones": "tombstones", "wide_table": "items",
}

// Templates lists the embedded templates by name.
func Templates() []Template {
	entries, _ := fs.ReadDir(files, "templates")
	var out []Template
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".cql")
		text, _ := files.ReadFile("templates/" + e.Name())
		out = append(out, Template{Name: name, DefaultTable: defaultTables[name], Summary: summary(string(text))})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// summary is the first sentence of a template's leading comment, whole even when it
// runs over several comment lines.
func summary(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "--") {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.TrimSpace(strings.TrimPrefix(line, "--")))
		if i := strings.Index(b.String(), ". "); i >= 0 {
			return b.String()[:i+1]
		}
		if strings.HasSuffix(b.String(), ".") {
			return b.String()
		}
	}
	return b.String()
}

// Source returns a template's text as shipped, for copying into your own repository.
func Source(name string) (string, error) {
	b, err := files.ReadFile("templates/" + name + ".cql")
	if err != nil {
		return "", fmt.Errorf("%w: %q", ErrUnknownTemplate, name)
	}
	return string(b), nil
}

// Params fill a template. Keyspace is required; the rest have defaults.
type Params struct {
	Keyspace string
	// Table names the template's table (default: Template.DefaultTable).
	Table string
	// ReplicationFactor for SimpleStrategy when Datacenters is empty (default 1).
	ReplicationFactor int
	// Datacenters switches to NetworkTopologyStrategy: datacenter → replication factor.
	Datacenters map[string]int
	// TTL is the table's default time to live (0: none; the tombstones template
	// defaults to 30 days).
	TTL time.Duration
}

// Render fills the named template. Identifiers are validated (letters, digits and _,
// at most 48) and quoted; replication factors must be 1–10 and TTLs whole seconds up to
// 20 years. Bad parameters are ErrBadParams, an unknown name ErrUnknownTemplate.
func Render(name string, p Params) (string, error) {
	src, err := Source(name)
	if err != nil {
		return "", err
	}
	if p.Table == "" {
		p.Table = defaultTables[name]
		if name == "tombstones" && p.TTL == 0 {
			p.TTL = 30 * 24 * time.Hour
		}
	}
	if err := p.validate(name); err != nil {
		return "", err
	}
	tmpl, err := template.New(name).Funcs(template.FuncMap{
		"ident":       cqltext.Quote,
		"seconds":     func(d time.Duration) int64 { return int64(d / time.Second) },
		"replication": replication,
	}).Option("missingkey=error").Parse(src)
	if err != nil {
		return "", fmt.Errorf("schema: template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, p); err != nil {
		return "", fmt.Errorf("schema: render %s: %w", name, err)
	}
	return buf.String(), nil
}

func (p Params) validate(name string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadParams, fmt.Sprintf(format, args...))
	}
	if err := cqltext.ValidName(p.Keyspace); err != nil {
		return bad("keyspace: %v", err)
	}
	if name != "keyspace" {
		if err := cqltext.ValidName(p.Table); err != nil {
			return bad("table: %v", err)
		}
		if len(p.Table)+len("_buckets") > cqltext.MaxIdentifierLength && name == "eventlog" {
			return bad("table %q: too long for its _buckets companion", p.Table)
		}
	}
	if p.ReplicationFactor < 0 || p.ReplicationFactor > 10 {
		return bad("replication factor %d outside 1..10", p.ReplicationFactor)
	}
	for dc, rf := range p.Datacenters {
		if !validDC(dc) {
			return bad("datacenter %q", dc)
		}
		if rf < 1 || rf > 10 {
			return bad("datacenter %s: replication factor %d outside 1..10", dc, rf)
		}
	}
	if p.TTL < 0 || p.TTL%time.Second != 0 || p.TTL > 20*365*24*time.Hour {
		return bad("TTL %v: whole seconds up to 20 years", p.TTL)
	}
	return nil
}

// validDC accepts datacenter names with dashes and dots (dc-1, us-east.1), which are
// string literals in CQL, not identifiers.
func validDC(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func replication(p Params) string {
	if len(p.Datacenters) == 0 {
		rf := p.ReplicationFactor
		if rf == 0 {
			rf = 1
		}
		return fmt.Sprintf("{'class': 'SimpleStrategy', 'replication_factor': %d}", rf)
	}
	dcs := make([]string, 0, len(p.Datacenters))
	for dc := range p.Datacenters {
		dcs = append(dcs, dc)
	}
	sort.Strings(dcs)
	parts := []string{"'class': 'NetworkTopologyStrategy'"}
	for _, dc := range dcs {
		parts = append(parts, fmt.Sprintf("'%s': %d", dc, p.Datacenters[dc]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
