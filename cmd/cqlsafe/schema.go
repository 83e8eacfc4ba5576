package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/schema"
)

const schemaHelp = `list: the templates. render NAME: print a template with names filled in.
apply NAME: apply it (idempotent DDL, waits for schema agreement).`

func runSchema(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(stderr, "usage: cqlsafe schema list | render NAME [flags] | apply NAME [flags]\n\n%s\n", schemaHelp)
		if len(args) == 0 {
			return usageError{fmt.Errorf("schema: name a subcommand")}
		}
		return flag.ErrHelp
	}
	switch args[0] {
	case "list":
		fs := newFlagSet("schema list", stderr, "Lists the embedded CQL templates.")
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tDEFAULT TABLE\tSUMMARY")
		for _, t := range schema.Templates() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.DefaultTable, t.Summary)
		}
		return tw.Flush()
	case "render", "apply":
		sub := args[0]
		fs := newFlagSet("schema "+sub+" NAME", stderr, schemaHelp)
		var cf connFlags
		cf.register(fs, "keyspace the template creates or uses (required)")
		table := fs.String("table", "", "table name (default: the template's)")
		rf := fs.Int("rf", 1, "replication factor for SimpleStrategy")
		dcs := fs.String("dc", "", "NetworkTopologyStrategy datacenters: dc1=3,dc2=3")
		ttl := fs.Duration("ttl", 0, "table default TTL (e.g. 720h)")
		pos, err := parseMixed(fs, args[1:]) // flags before or after the name
		if err != nil {
			return err
		}
		switch {
		case len(pos) == 0:
			return usageError{fmt.Errorf("schema %s: name a template (see cqlsafe schema list)", sub)}
		case len(pos) > 1:
			return usageError{fmt.Errorf("schema %s: unexpected argument %q", sub, pos[1])}
		}
		name := pos[0]
		if cf.keyspace == "" {
			return usageError{fmt.Errorf("schema %s: --keyspace is required", sub)}
		}
		p := schema.Params{Keyspace: cf.keyspace, Table: *table, ReplicationFactor: *rf, TTL: *ttl}
		if *dcs != "" {
			p.Datacenters = map[string]int{}
			for _, part := range strings.Split(*dcs, ",") {
				dc, n, ok := strings.Cut(part, "=")
				v, err := strconv.Atoi(n)
				if !ok || err != nil {
					return usageError{fmt.Errorf("--dc: %q is not dc=rf", part)}
				}
				p.Datacenters[dc] = v
			}
		}
		out, err := schema.Render(name, p)
		if err != nil {
			return usageError{err}
		}
		if sub == "render" {
			fmt.Fprint(stdout, out)
			return nil
		}
		ks := cf.keyspace
		cf.keyspace = "" // the keyspace may not exist yet
		s, err := cf.session(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		if name != "keyspace" { // a table template uses a keyspace it does not create
			var got string
			err := s.Query(`SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?`, ks).WithContext(ctx).Scan(&got)
			if errors.Is(err, gocql.ErrNotFound) {
				return fmt.Errorf("schema apply %s: keyspace %q does not exist; create it first: cqlsafe schema apply keyspace --keyspace %s --hosts %s", name, ks, ks, cf.hosts)
			}
		}
		start := time.Now()
		if err := schema.Apply(ctx, s, out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "applied %s to %s in %v (schema agreed)\n", name, ks, time.Since(start).Round(time.Millisecond))
		return nil
	}
	return usageError{fmt.Errorf("schema: unknown subcommand %q", args[0])}
}
