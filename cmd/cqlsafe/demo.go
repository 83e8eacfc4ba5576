package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/integration/harness"
)

const demoHelp = `Shows, with numbers measured on the spot, what binding NULL costs compared with
leaving a column UNSET. Uses --hosts (or CQLSAFE_CASSANDRA_HOSTS) when given; otherwise it
starts a throwaway Cassandra with testcontainers-go (image: CQLSAFE_CASSANDRA_IMAGE, default
cassandra:5.0) and removes it afterwards.`

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr, demoHelp)
	hosts := fs.String("hosts", os.Getenv(harness.EnvHosts), "Cassandra contact points, host:port[,host:port]")
	rows := fs.Int("rows", 200, "rows to write for each variant")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *rows < 1 || *rows > 100_000 {
		return usageError{fmt.Errorf("demo: --rows must be between 1 and 100000, got %d", *rows)}
	}
	progress := func(msg string) { fmt.Fprintf(stderr, "… %s\n", msg) }
	opts := []harness.Option{harness.WithProgress(progress)}
	if strings.TrimSpace(*hosts) != "" {
		opts = append(opts, harness.WithHosts(*hosts))
	}
	node, err := harness.Start(ctx, opts...)
	defer node.Close(context.Background())
	if err != nil {
		return err
	}
	s, err := node.Session(ctx, "")
	if err != nil {
		return err
	}
	defer s.Close()
	ks := harness.KeyspaceName("cqlsafe_demo")
	if err := node.CreateKeyspace(ctx, s, ks, 1); err != nil {
		return err
	}
	defer s.Query("DROP KEYSPACE IF EXISTS " + ks).Exec()
	if err := s.Query(fmt.Sprintf(`CREATE TABLE %s.wide (id int, seq int, a text, b text, c text, d text, PRIMARY KEY (id, seq))`, ks)).WithContext(ctx).Exec(); err != nil {
		return err
	}
	if err := s.AwaitSchemaAgreement(ctx); err != nil {
		return err
	}
	type variant struct {
		name string
		pk   int
		null any
	}
	variants := []variant{{"NULL bound (naive)", 1, nil}, {"UNSET bound", 2, gocql.UnsetValue}}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "variant\trows\ttombstone cells read\tread latency")
	for _, v := range variants {
		progress(fmt.Sprintf("writing %d rows, %s", *rows, v.name))
		for i := 0; i < *rows; i++ {
			if err := s.Query(fmt.Sprintf(`INSERT INTO %s.wide (id, seq, a, b, c, d) VALUES (?, ?, ?, ?, ?, ?)`, ks),
				v.pk, i, "value", v.null, v.null, v.null).WithContext(ctx).Exec(); err != nil {
				return err
			}
		}
		start := time.Now()
		tr, err := harness.TraceRead(ctx, s, fmt.Sprintf(`SELECT * FROM %s.wide WHERE id = ?`, ks), v.pk)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%v\n", v.name, tr.Rows, tr.TombstoneCells, time.Since(start).Round(time.Microsecond))
	}
	return tw.Flush()
}
