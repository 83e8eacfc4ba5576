package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/eventlog"
	"github.com/cqlsafe/cqlsafe/integration/faultproxy"
	"github.com/cqlsafe/cqlsafe/integration/harness"
	"github.com/cqlsafe/cqlsafe/overwrite"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/schema"
	"github.com/cqlsafe/cqlsafe/tombstone"
)

const demoHelp = `Shows cqlsafe's patterns at work with numbers measured on the spot: NULL-binding
inserts vs overwrite.Row (tombstone cells per read), a retried write under
an injected dropped response (written once, same WRITETIME) next to a counter that naive
retrying over-counts, an event log append and replay, and a delete + undelete.

Uses --hosts (or CQLSAFE_CASSANDRA_HOSTS) when given; otherwise starts a throwaway
Cassandra and removes it afterwards: a container when a Docker daemon answers (image
CQLSAFE_CASSANDRA_IMAGE, default cassandra:5.0), else a native node fetched with Maven
(needs Java 17 and Maven; CQLSAFE_CASSANDRA_VERSION picks the version). Everything is
written to a fresh keyspace, dropped at the end.`

type demo struct {
	ctx      context.Context
	node     *harness.Node
	s        *gocql.Session
	ks       string
	progress func(string)
	rows     int
	events   int
}

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("demo", stderr, demoHelp)
	var cf connFlags
	cf.register(fs, "unused by demo: it creates and drops its own keyspace")
	rows := fs.Int("rows", 1000, "rows per variant in the tombstone comparison")
	events := fs.Int("events", 10_000, "events to append and replay")
	keep := fs.Bool("keep", false, "keep the demo keyspace")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *rows < 1 || *rows > 100_000 {
		return usageError{fmt.Errorf("demo: --rows must be 1..100000, got %d", *rows)}
	}
	if *events < 1 || *events > 10_000_000 {
		return usageError{fmt.Errorf("demo: --events must be 1..10000000, got %d", *events)}
	}
	hostsGiven := false
	fs.Visit(func(f *flag.Flag) { hostsGiven = hostsGiven || f.Name == "hosts" })
	if hostsGiven && strings.TrimSpace(cf.hosts) == "" {
		// An empty --hosts (an unset variable in a script) must not start a node.
		return usageError{errors.New("demo: --hosts is empty: name host:port, or leave --hosts out to start a throwaway node")}
	}
	start := time.Now()
	progress := func(msg string) { fmt.Fprintf(stderr, "[%5.1fs] %s\n", time.Since(start).Seconds(), msg) }
	opts := []harness.Option{harness.WithProgress(progress), harness.WithLogger(cf.logger())}
	if strings.TrimSpace(cf.hosts) != "" {
		// Hosts the user named get --timeout, not the wait for a node the harness
		// starts itself: a typo fails in seconds with one line.
		cf.keyspace = ""
		s, err := cf.session(ctx)
		if err != nil {
			return err
		}
		s.Close()
		opts = append(opts, harness.WithHosts(cf.hosts), harness.WithStartTimeout(cf.timeout))
	}
	node, err := harness.Start(ctx, opts...)
	//lint:ignore SA5001 Close is nil-safe: cleanup is registered before the error check, as in testcontainers-go
	defer node.Close(context.Background())
	if err != nil {
		return err
	}
	s, err := node.Session(ctx, "")
	if err != nil {
		return err
	}
	defer s.Close()
	d := &demo{ctx: ctx, node: node, s: s, ks: harness.KeyspaceName("cqlsafe_demo"), progress: progress, rows: *rows, events: *events}
	if err := node.CreateKeyspace(ctx, s, d.ks, 1); err != nil {
		return err
	}
	if !*keep {
		defer s.Query("DROP KEYSPACE IF EXISTS " + d.ks).Exec()
	}
	ks, err := node.Session(ctx, d.ks)
	if err != nil {
		return err
	}
	defer ks.Close()
	d.s = ks

	tw := tabwriter.NewWriter(stdout, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "cqlsafe demo on Cassandra %s (%s)\n\n", node.Version(), node.Source())
	fmt.Fprintln(tw, "WHAT\tNAIVE\tCQLSAFE")
	for _, step := range []func(io.Writer) error{d.tombstones, d.retry, d.eventlog, d.undelete} {
		if err := step(tw); err != nil {
			return err
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\ndone in %.1fs\n", time.Since(start).Seconds())
	return nil
}

func (d *demo) exec(stmts ...string) error {
	for _, st := range stmts {
		if err := d.s.Query(st).WithContext(d.ctx).Exec(); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
		if err := d.s.AwaitSchemaAgreement(d.ctx); err != nil {
			return err
		}
	}
	return nil
}

// tombstones: the same rows (20 columns, 10 of them NULL) written naively and with
// overwrite.Row; Cassandra's trace counts the tombstone cells each read meets.
func (d *demo) tombstones(w io.Writer) error {
	cols := make([]string, 20)
	for i := range cols {
		cols[i] = fmt.Sprintf("c%02d text", i+1)
	}
	if err := d.exec(fmt.Sprintf("CREATE TABLE wide (id int, seq int, %s, PRIMARY KEY (id, seq))", strings.Join(cols, ", "))); err != nil {
		return err
	}
	tbl, err := overwrite.Describe(d.ctx, d.s, d.ks, "wide")
	if err != nil {
		return err
	}
	names := []string{"id", "seq"}
	for i := 1; i <= 20; i++ {
		names = append(names, fmt.Sprintf("c%02d", i))
	}
	naive := fmt.Sprintf("INSERT INTO wide (%s) VALUES (%s)", strings.Join(names, ", "), strings.TrimSuffix(strings.Repeat("?, ", 22), ", "))
	row := func(id, seq int) ([]any, map[string]any) {
		vals := []any{id, seq}
		m := map[string]any{"id": id, "seq": seq}
		for i := 1; i <= 20; i++ {
			if i <= 10 {
				v := fmt.Sprintf("value %d", i)
				vals = append(vals, v)
				m[fmt.Sprintf("c%02d", i)] = v
			} else {
				vals = append(vals, nil) // NULL: a cell tombstone
			}
		}
		return vals, m
	}
	d.progress(fmt.Sprintf("writing %d rows with NULLs bound (naive) and %d with overwrite.Row", d.rows, d.rows))
	for i := 0; i < d.rows; i++ {
		vals, m := row(1, i)
		if err := d.s.Query(naive, vals...).WithContext(d.ctx).Exec(); err != nil {
			return err
		}
		m["id"] = 2
		if _, err := overwrite.Row(d.ctx, d.s, tbl, m); err != nil {
			return err
		}
		if (i+1)%max(1, d.rows/4) == 0 {
			d.progress(fmt.Sprintf("  %d/%d rows", i+1, d.rows))
		}
	}
	// Only the trace's tombstone count: a read latency of a thousand unflushed rows
	// showed no difference worth a row (17.61 ms naive, 17.95 ms cqlsafe). BENCHMARKS.md
	// has latency against rows overwritten, flushed, where the tombstones do cost.
	nt, err := harness.TraceRead(d.ctx, d.s, "SELECT * FROM wide WHERE id = ?", 1)
	if err != nil {
		return err
	}
	ot, err := harness.TraceRead(d.ctx, d.s, "SELECT * FROM wide WHERE id = ?", 2)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "tombstone cells per read (%d rows, 10 of 20 columns NULL)\t%d\t%d\n", d.rows, nt.TombstoneCells, ot.TombstoneCells)
	return nil
}

// retry: responses dropped after the server applied the write.
func (d *demo) retry(w io.Writer) error {
	if err := d.exec("CREATE TABLE kv (id int PRIMARY KEY, v text)", "CREATE TABLE hits (id int PRIMARY KEY, n counter)"); err != nil {
		return err
	}
	px, err := faultproxy.Start(d.node.Hosts()[0])
	if err != nil {
		return err
	}
	defer px.Close()
	cl, err := d.node.ClusterVia(px.Addr(), d.ks)
	if err != nil {
		return err
	}
	cl.Timeout = 500 * time.Millisecond
	ps, err := cl.CreateSession()
	if err != nil {
		return err
	}
	defer ps.Close()
	d.progress("injecting a dropped response: the INSERT reaches Cassandra, its answer never comes back")
	var attempts atomic.Int64
	p := retry.NewPolicy(retry.WithBackoff(10*time.Millisecond, 100*time.Millisecond),
		retry.WithObserver(func(e retry.Event) { attempts.Add(1) }))
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("INSERT INTO kv")))
	pinned := p.Clock().Next()
	if err := p.Exec(d.ctx, ps.Query("INSERT INTO kv (id, v) VALUES (?, ?)", 1, "hello"), retry.AtTimestamp(pinned)); err != nil {
		return err
	}
	var n int
	var wt int64
	if err := d.s.Query("SELECT COUNT(*), WRITETIME(v) FROM kv WHERE id = 1").WithContext(d.ctx).Scan(&n, &wt); err != nil {
		return err
	}
	same := "same WRITETIME as pinned"
	if wt != pinned {
		same = fmt.Sprintf("WRITETIME %d != pinned %d", wt, pinned)
	}
	fmt.Fprintf(w, "idempotent write, response dropped\t(not run)\twritten once after %d attempts, %s (rows: %d)\n", attempts.Load()+1, same, n)

	d.progress("the same fault on a counter increment")
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE hits")))
	perr := p.Exec(d.ctx, ps.Query("UPDATE hits SET n = n + 1 WHERE id = 1"))
	px.SetRule(faultproxy.DropNext(1, faultproxy.Writes("UPDATE hits")))
	nerr := ps.Query("UPDATE hits SET n = n + 1 WHERE id = 2").RetryPolicy(harness.NaiveRetry{}).Exec()
	if nerr != nil {
		return nerr
	}
	var c1, c2 int64
	if err := d.s.Query("SELECT n FROM hits WHERE id = 1").Scan(&c1); err != nil {
		return err
	}
	if err := d.s.Query("SELECT n FROM hits WHERE id = 2").Scan(&c2); err != nil {
		return err
	}
	verdict := "not retried"
	if errors.Is(perr, retry.ErrOutcomeUnknown) {
		verdict = "not retried, caller told the outcome is unknown"
	}
	naive := fmt.Sprintf("counter = %d (over-counted)", c2)
	if c2 <= 1 {
		naive = fmt.Sprintf("counter = %d", c2)
	}
	fmt.Fprintf(w, "one counter increment, response dropped\t%s\tcounter = %d (%s)\n", naive, c1, verdict)
	return nil
}

func (d *demo) eventlog(w io.Writer) error {
	if err := schema.ApplyTemplate(d.ctx, d.s, "eventlog", schema.Params{Keyspace: d.ks}); err != nil {
		return err
	}
	l, err := eventlog.New(d.s, d.ks, "events", eventlog.WithBucketWidth(time.Hour))
	if err != nil {
		return err
	}
	d.progress(fmt.Sprintf("appending %d events over 3 hours of event time", d.events))
	base := time.Now().Add(-3 * time.Hour)
	step := 3 * time.Hour / time.Duration(d.events)
	t0 := time.Now()
	for i := 0; i < d.events; i += 100 {
		batch := make([]eventlog.Event, 0, 100)
		for j := i; j < min(i+100, d.events); j++ {
			batch = append(batch, eventlog.Event{Time: base.Add(time.Duration(j) * step), Type: "clicked", Payload: []byte("{}")})
		}
		if _, err := l.Append(d.ctx, "user-42", batch...); err != nil {
			return err
		}
	}
	appendDur := time.Since(t0)
	t0 = time.Now()
	n := 0
	buckets := map[int64]bool{}
	for e, err := range l.Read(d.ctx, "user-42") {
		if err != nil {
			return err
		}
		n++
		buckets[e.Bucket] = true
	}
	fmt.Fprintf(w, "event log append / replay\t(not run)\t%d events in %v / %d replayed in order in %v (%d buckets)\n",
		d.events, appendDur.Round(time.Millisecond), n, time.Since(t0).Round(time.Millisecond), len(buckets))
	return nil
}

func (d *demo) undelete(w io.Writer) error {
	if err := schema.ApplyTemplate(d.ctx, d.s, "tombstones", schema.Params{Keyspace: d.ks}); err != nil {
		return err
	}
	if err := d.exec("CREATE TABLE accounts (id int PRIMARY KEY, name text, balance bigint)"); err != nil {
		return err
	}
	for _, id := range []int{1, 2} {
		if err := d.s.Query("INSERT INTO accounts (id, name, balance) VALUES (?, 'Ada', 100)", id).Exec(); err != nil {
			return err
		}
	}
	tbl, err := overwrite.Describe(d.ctx, d.s, d.ks, "accounts")
	if err != nil {
		return err
	}
	st, err := tombstone.New(d.ctx, d.s, d.ks, "tombstones")
	if err != nil {
		return err
	}
	d.progress("deleting a row through the tombstone store, then undoing it")
	key := map[string]any{"id": 1}
	if _, err := st.Delete(d.ctx, tbl, key, "demo-cmd-1"); err != nil {
		return err
	}
	if _, err := st.Undelete(d.ctx, tbl, key, "demo-cmd-1"); err != nil {
		return err
	}
	var name string
	var balance int64
	if err := d.s.Query("SELECT name, balance FROM accounts WHERE id = 1").Scan(&name, &balance); err != nil {
		return err
	}
	// The naive side: a plain DELETE, and what is left to restore the row from.
	if err := d.s.Query("DELETE FROM accounts WHERE id = 2").Exec(); err != nil {
		return err
	}
	var left int
	if err := d.s.Query("SELECT COUNT(*) FROM accounts WHERE id = 2").Scan(&left); err != nil {
		return err
	}
	naive := "row gone, nothing kept to restore it from"
	if left != 0 {
		naive = fmt.Sprintf("%d row(s) left", left)
	}
	fmt.Fprintf(w, "delete + undelete\t%s\trestored name=%s balance=%d\n", naive, name, balance)
	return nil
}
