package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

const tombstoneHelp = `list: the delete/undelete records of a row. plan: what an undelete by --command
would restore, next to the row as it is now. undelete: restore it (asks for
confirmation unless --yes). The row is named by --table and --key col=value,...`

func runTombstone(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(stderr, "usage: cqlsafe tombstone list|plan|undelete --keyspace KS --table T --key col=v,... [flags]\n\n%s\n", tombstoneHelp)
		if len(args) == 0 {
			return usageError{errors.New("tombstone: name a subcommand")}
		}
		return flag.ErrHelp
	}
	sub := args[0]
	if sub != "list" && sub != "plan" && sub != "undelete" {
		return usageError{fmt.Errorf("tombstone: unknown subcommand %q", sub)}
	}
	fs := newFlagSet("tombstone "+sub, stderr, tombstoneHelp)
	var cf connFlags
	cf.register(fs, "keyspace of the table (required)")
	table := fs.String("table", "", "the table whose row was deleted (required)")
	key := fs.String("key", "", "the row's primary key: col=value,... (required; quote a value with a comma: col='a,b')")
	store := fs.String("store", "tombstones", "the tombstone table, in the same keyspace")
	command := fs.String("command", "", "the command id whose delete to undo (plan, undelete)")
	yes := fs.Bool("yes", false, "undelete without asking")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	switch {
	case cf.keyspace == "" || *table == "" || *key == "":
		return usageError{errors.New("tombstone: --keyspace, --table and --key are required")}
	case sub != "list" && *command == "":
		return usageError{fmt.Errorf("tombstone %s: --command is required", sub)}
	}
	s, err := cf.session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	tbl, err := overwrite.Describe(ctx, s, cf.keyspace, *table)
	if err != nil {
		return tableError(err, "--table")
	}
	keyMap, err := parseKey(tbl, *key)
	if err != nil {
		return usageError{err}
	}
	st, err := tombstone.New(ctx, s, cf.keyspace, *store)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		recs, err := st.List(ctx, tbl, keyMap)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "AT\tACTION\tCOMMAND\tTIMESTAMP\tVALUES")
		for _, r := range recs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.At.Format(time.RFC3339), r.Action, r.CommandID, r.Timestamp, formatValues(r.Values))
		}
		if len(recs) == 0 {
			fmt.Fprintln(tw, "(no records)")
		}
		return tw.Flush()
	case "plan", "undelete":
		p, err := st.Plan(ctx, tbl, keyMap, *command)
		if err != nil {
			return err
		}
		if p.Tombstone.Action == "" {
			return p.Reason // no record at all: one line, nothing to show
		}
		fmt.Fprintf(stdout, "row:      %s.%s %s\n", tbl.Keyspace, tbl.Name, *key)
		what := "deleted: "
		if p.Tombstone.Action == tombstone.ActionUndelete {
			what = "restored:" // the last record is an undelete: the row was brought back
		}
		fmt.Fprintf(stdout, "%s %s by %q (timestamp %d)\n", what, p.Tombstone.At.Format(time.RFC3339), p.Tombstone.CommandID, p.Tombstone.Timestamp)
		fmt.Fprintf(stdout, "restore:  %s\n", formatValues(p.Restore))
		if p.Current == nil {
			fmt.Fprintf(stdout, "now:      (row does not exist)\n")
		} else {
			fmt.Fprintf(stdout, "now:      %s\n", formatValues(p.Current))
		}
		if !p.Allowed {
			fmt.Fprintf(stdout, "undelete: refused: %v\n", p.Reason)
			return exitError{code: 1}
		}
		fmt.Fprintf(stdout, "undelete: allowed\n")
		if sub == "plan" {
			return nil
		}
		if !*yes {
			fmt.Fprint(stdout, "restore this row? [y/N] ")
			line, _ := bufio.NewReader(stdin).ReadString('\n')
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				fmt.Fprintln(stdout, "not restored")
				return exitError{code: 1}
			}
		}
		if _, err := st.Undelete(ctx, tbl, keyMap, *command); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "restored")
	}
	return nil
}

// parseKey turns "col=value,..." into typed key values for the table's key columns.
// Spaces around names and values are ignored; a value with a comma, a leading or
// trailing space or a quote is written in single quotes, CQL-style, a quote inside
// doubled.
func parseKey(t *overwrite.Table, s string) (map[string]any, error) {
	pairs, err := splitKey(s)
	if err != nil {
		return nil, fmt.Errorf("--key: %w", err)
	}
	out := map[string]any{}
	for _, kv := range pairs {
		c, ok := t.Column(kv[0])
		if !ok {
			return nil, fmt.Errorf("--key: %s.%s has no column %q", t.Keyspace, t.Name, kv[0])
		}
		if _, dup := out[c.Name]; dup {
			return nil, fmt.Errorf("--key: %q given twice", c.Name)
		}
		v, err := parseValue(c, kv[1])
		if err != nil {
			return nil, fmt.Errorf("--key %s: %v", c.Name, err)
		}
		out[c.Name] = v
	}
	// The row is named by its whole primary key, nothing else: a partial key or a
	// regular column would name another row, or none.
	var keyNames []string
	for _, c := range t.KeyColumns() {
		keyNames = append(keyNames, c.Name)
	}
	for _, c := range t.KeyColumns() {
		if _, ok := out[c.Name]; !ok {
			return nil, fmt.Errorf("--key: missing %q: name every primary key column (%s)", c.Name, strings.Join(keyNames, ", "))
		}
	}
	if len(out) != len(keyNames) {
		for name := range out {
			if !slices.Contains(keyNames, name) {
				return nil, fmt.Errorf("--key: %q is not a primary key column (%s)", name, strings.Join(keyNames, ", "))
			}
		}
	}
	return out, nil
}

// splitKey splits "a=1, b='x,y'" into name/value pairs: names and unquoted values
// trimmed, quoted values as written between the quotes (two quotes are one).
func splitKey(s string) ([][2]string, error) {
	var out [][2]string
	for i := 0; ; {
		eq := strings.IndexByte(s[i:], '=')
		if eq < 0 {
			return nil, fmt.Errorf("%q is not col=value", strings.TrimSpace(s[i:]))
		}
		name := strings.TrimSpace(s[i : i+eq])
		if name == "" || strings.ContainsAny(name, ",'") {
			return nil, fmt.Errorf("%q is not col=value", strings.TrimSpace(s[i:i+eq+1]))
		}
		i += eq + 1
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		var val string
		if i < len(s) && s[i] == '\'' {
			var b strings.Builder
			j := i + 1
			for ; ; j++ {
				if j >= len(s) {
					return nil, fmt.Errorf("%s: the quote opened at %q is not closed", name, s[i:])
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j++
						continue
					}
					break
				}
				b.WriteByte(s[j])
			}
			val, i = b.String(), j+1
			for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
				i++
			}
			if i < len(s) && s[i] != ',' {
				return nil, fmt.Errorf("%s: text after the closing quote: %q", name, s[i:])
			}
		} else {
			end := strings.IndexByte(s[i:], ',')
			if end < 0 {
				end = len(s) - i
			}
			val = strings.TrimSpace(s[i : i+end])
			if strings.Contains(val, "'") {
				return nil, fmt.Errorf("%s: a value with a quote is written in quotes: '%s'", name, strings.ReplaceAll(val, "'", "''"))
			}
			i += end
		}
		out = append(out, [2]string{name, val})
		if i >= len(s) {
			return out, nil
		}
		i++ // the comma
	}
}

// parseValue parses a key value for column c as the driver must bind it: a float as
// float32, a timestamp refused when it has digits below the millisecond (Cassandra
// keeps milliseconds: the row named would be another), a varint of any size.
func parseValue(c overwrite.Column, s string) (any, error) {
	v, err := parseTyped(c, s)
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		// strconv's words are Go's: say it in the column's type.
		if errors.Is(ne.Err, strconv.ErrRange) {
			return nil, fmt.Errorf("%s is out of range for %s", s, c.CQLType)
		}
		return nil, fmt.Errorf("%q is not a %s value", s, c.CQLType)
	}
	return v, err
}

func parseTyped(c overwrite.Column, s string) (any, error) {
	switch c.Type.Type() {
	case gocql.TypeVarchar, gocql.TypeText, gocql.TypeAscii:
		return s, nil
	case gocql.TypeBigInt, gocql.TypeCounter:
		return strconv.ParseInt(s, 10, 64)
	case gocql.TypeInt:
		n, err := strconv.ParseInt(s, 10, 32)
		return int32(n), err
	case gocql.TypeSmallInt:
		n, err := strconv.ParseInt(s, 10, 16)
		return int16(n), err
	case gocql.TypeTinyInt:
		n, err := strconv.ParseInt(s, 10, 8)
		return int8(n), err
	case gocql.TypeVarint:
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case gocql.TypeBoolean:
		return strconv.ParseBool(s)
	case gocql.TypeDouble:
		return strconv.ParseFloat(s, 64)
	case gocql.TypeFloat:
		f, err := strconv.ParseFloat(s, 32)
		return float32(f), err
	case gocql.TypeUUID, gocql.TypeTimeUUID:
		return gocql.ParseUUID(s)
	case gocql.TypeTimestamp:
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, err
		}
		if ts.Nanosecond()%int(time.Millisecond) != 0 {
			return nil, fmt.Errorf("%s: a timestamp holds milliseconds; this names no row (write %s)", s, ts.Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00"))
		}
		return ts, nil
	case gocql.TypeBlob:
		return hex.DecodeString(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
	}
	return nil, fmt.Errorf("type %s is not supported on the command line", c.CQLType)
}

func formatValues(m map[string]any) string {
	if m == nil {
		return "{}"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
