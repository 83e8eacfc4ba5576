package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltext"
	"github.com/cqlsafe/cqlsafe/keymigrate"
	"github.com/cqlsafe/cqlsafe/table"
)

const migrateHelp = `The stages of a key-format migration (keymigrate) from table --old to table --new:
  check     the two tables have the same non-key columns, and the key transform
            (--map) fits the new key; shows it on a few rows
  backfill  copy every row under its new key (WRITETIME and TTL kept) with --workers
            workers in this process; run it on as many machines as you like: the
            workers share the token ranges through leases in Cassandra. Ctrl-C
            stops cleanly and hands the leases back
  status    the backfill's progress, as recorded in Cassandra
  verify    compare both tables under the new keys (exit 1 on any difference)
Dual writes (keymigrate.DualWrite/DualDelete) must be on before the backfill starts.

` + mapHelp

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(stderr, "usage: cqlsafe migrate check|backfill|status|verify --hosts H --keyspace KS --old T --new T2 [--map COL=EXPR]... [flags]\n\n%s\n", migrateHelp)
		if len(args) == 0 {
			return usageError{errors.New("migrate: name a subcommand")}
		}
		return flag.ErrHelp
	}
	sub := args[0]
	switch sub {
	case "check", "backfill", "status", "verify":
	default:
		return usageError{fmt.Errorf("migrate: unknown subcommand %q (check, backfill, status, verify)", sub)}
	}
	fs := newFlagSet("migrate "+sub, stderr, migrateHelp)
	var mf migrateFlags
	mf.register(fs, sub)
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if err := mf.validate(); err != nil {
		return usageError{err}
	}
	s, err := mf.conn.session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	m, old, nw, maps, err := mf.migration(ctx, s)
	if err != nil {
		return err
	}
	switch sub {
	case "check":
		return migrateCheck(ctx, s, old, nw, maps, m, stdout)
	case "status":
		st, err := m.Status(ctx, mf.leaseOption())
		if errors.Is(err, keymigrate.ErrNotStarted) {
			fmt.Fprintf(stdout, "migration %q: not started\n", m.ID)
			return nil
		}
		if err != nil {
			return err
		}
		printStatus(stdout, st, mf.verbose)
		return nil
	case "verify":
		return migrateVerify(ctx, m, mf.sample, stdout)
	}
	return migrateBackfill(ctx, m, &mf, stdout, stderr)
}

// migrateFlags are the flags of the migrate subcommands.
type migrateFlags struct {
	sub        string
	conn       connFlags
	old, new   string
	maps       keyMap
	id         string
	leaseTable string
	ranges     int
	// backfill
	workers  int
	inFlight int
	rate     float64
	resume   bool
	leaseTTL time.Duration
	progress string
	every    time.Duration
	// status, verify
	verbose bool
	sample  int
}

func (f *migrateFlags) register(fs *flag.FlagSet, sub string) {
	f.sub = sub
	f.conn.register(fs, "keyspace of both tables (required)")
	fs.StringVar(&f.old, "old", "", "the table with the old key format (required)")
	fs.StringVar(&f.new, "new", "", "the table with the new key format (required)")
	fs.Var(&f.maps, "map", "NEWCOL=EXPR: where a new key column comes from (repeat; see above)")
	fs.StringVar(&f.id, "id", "", "the migration's id in the lease table (default OLD-to-NEW)")
	fs.StringVar(&f.leaseTable, "lease-table", "keymigrate_leases", "the lease table, in --keyspace (created when missing)")
	switch sub {
	case "backfill":
		fs.IntVar(&f.ranges, "ranges", 256, "token ranges: the unit of work (every worker of a migration must agree)")
		fs.IntVar(&f.workers, "workers", 1, "workers in this process (each copies one range at a time)")
		fs.IntVar(&f.inFlight, "in-flight", 16, "rows each worker writes at once while its scan reads on (1 to 1024)")
		fs.Float64Var(&f.rate, "rate", 0, "rows per second for this process, shared by its workers (0: no limit)")
		fs.BoolVar(&f.resume, "resume", false, "continue (or join) a migration that has started")
		fs.DurationVar(&f.leaseTTL, "lease-ttl", time.Minute, "a lease's time to live (whole seconds); renewed every third of it")
		fs.StringVar(&f.progress, "progress", "auto", "auto (a bar when stderr is a terminal, else lines), bar, lines or none")
		fs.DurationVar(&f.every, "progress-every", 10*time.Second, "interval of progress lines")
	case "status":
		fs.BoolVar(&f.verbose, "verbose", false, "list the ranges held now")
	case "verify":
		fs.IntVar(&f.sample, "sample", 1, "compare every n-th row's values (counts stay complete)")
	}
}

func (f *migrateFlags) validate() error {
	switch {
	case f.conn.keyspace == "" || f.old == "" || f.new == "":
		return errors.New("migrate: --keyspace, --old and --new are required")
	case f.sub == "backfill" && (f.ranges < 1 || f.ranges > 1<<16):
		return fmt.Errorf("migrate: --ranges %d: want 1 to 65536", f.ranges)
	case f.sub == "backfill" && (f.workers < 1 || f.workers > 256):
		return fmt.Errorf("migrate: --workers %d: want 1 to 256", f.workers)
	case f.sub == "backfill" && (f.inFlight < 1 || f.inFlight > 1024):
		return fmt.Errorf("migrate: --in-flight %d: want 1 to 1024", f.inFlight)
	case f.rate < 0:
		return fmt.Errorf("migrate: --rate %v: want 0 (no limit) or more", f.rate)
	case f.sub == "backfill" && (f.leaseTTL < 2*time.Second || f.leaseTTL > 24*time.Hour || f.leaseTTL%time.Second != 0):
		return fmt.Errorf("migrate: --lease-ttl %v: want whole seconds from 2s to 24h", f.leaseTTL)
	case f.sub == "verify" && f.sample < 1:
		return fmt.Errorf("migrate: --sample %d: want at least 1", f.sample)
	case f.sub == "backfill" && f.every <= 0:
		return fmt.Errorf("migrate: --progress-every %v: want more than 0", f.every)
	}
	for _, n := range []string{f.conn.keyspace, f.old, f.new, f.leaseTable} {
		if err := cqltext.ValidName(n); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	switch f.progress {
	case "", "auto", "bar", "lines", "none":
	default:
		return fmt.Errorf("migrate: --progress %q: auto, bar, lines or none", f.progress)
	}
	if f.id == "" {
		f.id = f.old + "-to-" + f.new
	}
	return nil
}

func (f *migrateFlags) leaseOption() keymigrate.WorkerOption {
	return keymigrate.LeaseTable(f.conn.keyspace, f.leaseTable)
}

// migration describes both tables and builds the Migration with the --map transform.
func (f *migrateFlags) migration(ctx context.Context, s *gocql.Session) (*keymigrate.Migration, *table.Table, *table.Table, []mapping, error) {
	old, err := table.Describe(ctx, s, f.conn.keyspace, f.old)
	if err != nil {
		return nil, nil, nil, nil, tableError(err, "--old")
	}
	nw, err := table.Describe(ctx, s, f.conn.keyspace, f.new)
	if err != nil {
		return nil, nil, nil, nil, tableError(err, "--new")
	}
	tr, maps, err := parseTransform(f.maps, old, nw)
	if err != nil {
		return nil, nil, nil, nil, usageError{err}
	}
	m, err := keymigrate.New(s, f.id, old, nw, tr)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return m, old, nw, maps, nil
}

func columnList(cs []table.Column) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + " " + c.CQLType
	}
	return strings.Join(parts, ", ")
}

// migrateCheck shows the tables and the transform applied to the first rows of the old
// table. keymigrate.New already refused tables whose non-key columns differ.
func migrateCheck(ctx context.Context, s *gocql.Session, old, nw *table.Table, maps []mapping, m *keymigrate.Migration, stdout io.Writer) error {
	fmt.Fprintf(stdout, "old:     %s.%s key (%s)\n", old.Keyspace, old.Name, columnList(old.KeyColumns()))
	fmt.Fprintf(stdout, "new:     %s.%s key (%s)\n", nw.Keyspace, nw.Name, columnList(nw.KeyColumns()))
	vals := append(append([]table.Column{}, old.Static...), old.Regular...)
	fmt.Fprintf(stdout, "columns: %s: the same in both\n", columnList(vals))
	for i, mp := range maps {
		label := "key:     "
		if i > 0 {
			label = "         "
		}
		fmt.Fprintf(stdout, "%s%s\n", label, mp)
	}
	// The transform on the first rows, as the backfill will apply it.
	cols := map[string]bool{}
	var names []string
	for _, c := range old.KeyColumns() {
		cols[c.Name] = true
		names = append(names, cqltext.Quote(c.Name))
	}
	for _, mp := range maps {
		if !cols[mp.oldCol] {
			cols[mp.oldCol] = true
			names = append(names, cqltext.Quote(mp.oldCol))
		}
	}
	iter := s.Query(`SELECT ` + strings.Join(names, ", ") + ` FROM ` + cqltext.QuoteQualified(old.Keyspace, old.Name) + ` LIMIT 5`).WithContext(ctx).Iter()
	bad := 0
	n := 0
	for {
		row := map[string]any{}
		if !iter.MapScan(row) {
			break
		}
		n++
		var oldKey, newKey []string
		for _, c := range old.KeyColumns() {
			oldKey = append(oldKey, fmt.Sprint(row[c.Name]))
		}
		tr := map[string]any{}
		for _, mp := range maps {
			v, err := apply(mp, row[mp.oldCol])
			if err != nil {
				bad++
				newKey = append(newKey, "error: "+err.Error())
				continue
			}
			tr[mp.newCol] = v
			newKey = append(newKey, fmt.Sprint(v))
		}
		if n == 1 {
			fmt.Fprintln(stdout, "sample:")
		}
		fmt.Fprintf(stdout, "  (%s) → (%s)\n", strings.Join(oldKey, ", "), strings.Join(newKey, ", "))
	}
	if err := iter.Close(); err != nil {
		return fmt.Errorf("read %s.%s: %w", old.Keyspace, old.Name, err)
	}
	if n == 0 {
		fmt.Fprintln(stdout, "sample:  (the old table is empty)")
	}
	if bad > 0 {
		fmt.Fprintf(stdout, "check: %d of %d sample rows cannot be transformed\n", bad, n)
		return exitError{code: 1}
	}
	fmt.Fprintf(stdout, "check: ok (migration id %q)\n", m.ID)
	return nil
}

func migrateVerify(ctx context.Context, m *keymigrate.Migration, sample int, stdout io.Writer) error {
	var opts []keymigrate.VerifyOption
	if sample > 1 {
		opts = append(opts, keymigrate.WithSample(sample))
	}
	rep, err := m.Verify(ctx, opts...)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "verify: %s\n", rep)
	for i, d := range rep.Diffs {
		if i == 10 {
			fmt.Fprintf(stdout, "  … %d more\n", len(rep.Diffs)-10)
			break
		}
		fmt.Fprintf(stdout, "  %s: old key %v → new key %v: old %s, new %s\n", d.Kind, d.OldKey, d.NewKey, formatValues(d.Old), formatValues(d.New))
	}
	if !rep.OK() {
		return exitError{code: 1}
	}
	fmt.Fprintln(stdout, "verify: ok")
	return nil
}

func printStatus(w io.Writer, st keymigrate.Status, verbose bool) {
	fmt.Fprintf(w, "migration: %s (%s → %s)\n", st.Migration, st.Source, st.Target)
	state := "in progress"
	if st.Complete() {
		state = "complete"
	}
	fmt.Fprintf(w, "ranges:    %d/%d done, %d claimed, %d free (%s)\n", st.Done, st.RangesTotal, st.Claimed, st.Free, state)
	fmt.Fprintf(w, "rows:      %d copied in done ranges; %d copied more than once; %d takeovers\n", st.Rows, st.CopiedTwice(), st.Takeovers)
	owners := make([]string, 0, len(st.Owners))
	for o := range st.Owners {
		owners = append(owners, o)
	}
	sort.Strings(owners)
	for i, o := range owners {
		owners[i] = fmt.Sprintf("%s (%d)", o, st.Owners[o])
	}
	if len(owners) > 0 {
		fmt.Fprintf(w, "workers:   %s\n", strings.Join(owners, ", "))
	}
	if !st.Updated.IsZero() {
		fmt.Fprintf(w, "updated:   %s\n", st.Updated.Local().Format(time.RFC3339))
	}
	if verbose {
		for _, r := range st.Ranges {
			if r.State == "claimed" {
				fmt.Fprintf(w, "  range %d: %s, %d rows, lease %v left, %d claims\n", r.Range, r.Owner, r.Rows, r.LeaseLeft, r.Claims)
			}
		}
	}
}

// migrateBackfill runs --workers workers until every range is done or ctx is cancelled
// (Ctrl-C): then the workers hand their leases back and the command exits 130.
func migrateBackfill(ctx context.Context, m *keymigrate.Migration, f *migrateFlags, stdout, stderr io.Writer) error {
	lease := f.leaseOption()
	st, err := m.Status(ctx, lease)
	switch {
	case errors.Is(err, keymigrate.ErrNotStarted):
	case err != nil:
		return err
	case !f.resume:
		return usageError{fmt.Errorf("migrate: migration %q has started (%v): pass --resume to continue or join it, or choose another --id", m.ID, st)}
	case st.Complete():
		fmt.Fprintf(stdout, "backfill: migration %q is complete: %v\n", m.ID, st)
		return nil
	}
	opts := []keymigrate.WorkerOption{lease, keymigrate.WorkerRanges(f.ranges), keymigrate.WorkerLeaseTTL(f.leaseTTL),
		keymigrate.WorkerRowsInFlight(f.inFlight)}
	if f.rate > 0 {
		opts = append(opts, keymigrate.WorkerRate(f.rate/float64(f.workers)))
	}
	view := newProgressView(stderr, f.progress, f.every, func(ctx context.Context) (keymigrate.Status, error) {
		return m.Status(ctx, lease)
	})
	opts = append(opts, keymigrate.WorkerProgress(view.event))
	host, _ := os.Hostname()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	view.start(wctx)
	reps := make([]keymigrate.WorkerReport, f.workers)
	errs := make([]error, f.workers)
	var wg sync.WaitGroup
	for i := range reps {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := keymigrate.WorkerID(fmt.Sprintf("%s-%d-%d", host, os.Getpid(), i))
			reps[i], errs[i] = m.RunWorker(wctx, append(opts, id)...)
			if errs[i] != nil {
				cancel() // one worker's failure stops the others: they hand their leases back
			}
		}(i)
	}
	wg.Wait()
	view.stop()
	var total keymigrate.WorkerReport
	for _, r := range reps {
		total.Ranges += r.Ranges
		total.Rows += r.Rows
		total.Writes += r.Writes
		total.Lost += r.Lost
		total.Released += r.Released
		total.Elapsed = max(total.Elapsed, r.Elapsed)
	}
	secs := max(total.Elapsed.Seconds(), 1e-3)
	fmt.Fprintf(stdout, "backfill: this process: %d workers, %d ranges finished, %d rows copied in %v (%.0f rows/s), %d leases lost, %d released\n",
		f.workers, total.Ranges, total.Rows, total.Elapsed.Round(time.Millisecond), float64(total.Rows)/secs, total.Lost, total.Released)
	if ctx.Err() != nil {
		fmt.Fprintf(stdout, "backfill: interrupted: leases handed back; run again with --resume (here or anywhere) to finish\n")
		return exitError{code: 130}
	}
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	st, err = m.Status(ctx, lease)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backfill: %v\n", st)
	fmt.Fprintf(stdout, "next: cqlsafe migrate verify --keyspace %s --old %s --new %s …\n", f.conn.keyspace, f.old, f.new)
	return nil
}
