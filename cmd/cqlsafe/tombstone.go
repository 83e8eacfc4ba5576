package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
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
	key := fs.String("key", "", "the row's primary key: col=value,... (required)")
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
		fmt.Fprintf(stdout, "deleted:  %s by %q (timestamp %d)\n", p.Tombstone.At.Format(time.RFC3339), p.Tombstone.CommandID, p.Tombstone.Timestamp)
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
func parseKey(t *overwrite.Table, s string) (map[string]any, error) {
	out := map[string]any{}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("--key: %q is not col=value", part)
		}
		c, ok := t.Column(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("--key: %s.%s has no column %q", t.Keyspace, t.Name, name)
		}
		if _, dup := out[c.Name]; dup {
			return nil, fmt.Errorf("--key: %q given twice", c.Name)
		}
		v, err := parseValue(c, val)
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

func parseValue(c overwrite.Column, s string) (any, error) {
	switch c.Type.Type() {
	case gocql.TypeVarchar, gocql.TypeText, gocql.TypeAscii:
		return s, nil
	case gocql.TypeInt, gocql.TypeBigInt, gocql.TypeSmallInt, gocql.TypeTinyInt, gocql.TypeVarint:
		return strconv.ParseInt(s, 10, 64)
	case gocql.TypeBoolean:
		return strconv.ParseBool(s)
	case gocql.TypeDouble, gocql.TypeFloat:
		return strconv.ParseFloat(s, 64)
	case gocql.TypeUUID, gocql.TypeTimeUUID:
		return gocql.ParseUUID(s)
	case gocql.TypeTimestamp:
		return time.Parse(time.RFC3339Nano, s)
	case gocql.TypeBlob:
		return hex.DecodeString(strings.TrimPrefix(s, "0x"))
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
