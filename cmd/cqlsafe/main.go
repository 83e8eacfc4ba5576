// Command cqlsafe shows and checks cqlsafe's patterns against a real Cassandra.
//
//	cqlsafe demo [--hosts host:port]        the patterns at work, measured on the spot
//	cqlsafe lint [--json] [--schema F|--hosts H] FILE...|-   is every statement safe to retry?
//	cqlsafe schema list|render|apply        the CQL templates
//	cqlsafe tombstone list|plan|undelete    inspect and undo recoverable deletes
//	cqlsafe migrate check|backfill|status|verify  change a table's key format (keymigrate)
//	cqlsafe vet [--json] [--schema F] [pkgs] Go code that writes to Cassandra unsafely
//	cqlsafe outbox list|drop|replay FILE     see, drop and replay an outbox's records
//
// Without --hosts (or CQLSAFE_CASSANDRA_HOSTS), demo starts a throwaway Cassandra through
// the integration harness (testcontainers-go, image CQLSAFE_CASSANDRA_IMAGE).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

const usage = `cqlsafe — safe-to-retry, cheap-to-overwrite writes for Apache Cassandra

usage:
  cqlsafe demo [flags]                 show the patterns at work against a real Cassandra
  cqlsafe lint [--json] [--schema FILE.cql | --hosts H] FILE...|-
                                     check that CQL statements are safe to retry
  cqlsafe schema list                  list the CQL templates
  cqlsafe schema render NAME [flags]   print a template with names filled in
  cqlsafe schema apply NAME [flags]    apply a template to a cluster
  cqlsafe tombstone list|plan|undelete inspect and undo recoverable deletes
  cqlsafe migrate check|backfill|status|verify
                                     change a table's key format: many workers, leases in Cassandra
  cqlsafe vet [--json] [--schema FILE.cql] [packages]
                                     find Go code that writes to Cassandra unsafely
  cqlsafe outbox list|drop|replay FILE see, drop and replay the records of an outbox file
  cqlsafe help                         this text

Run "cqlsafe COMMAND --help" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command line and returns the exit code: 0 success, 1 the command
// ran and found a problem (or failed), 2 a usage error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "demo":
		err = runDemo(ctx, args[1:], stdout, stderr)
	case "lint":
		err = runLint(ctx, args[1:], stdout, stderr, stdin)
	case "schema":
		err = runSchema(ctx, args[1:], stdout, stderr)
	case "tombstone":
		err = runTombstone(ctx, args[1:], stdin, stdout, stderr)
	case "vet":
		err = runVet(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = runMigrate(ctx, args[1:], stdout, stderr)
	case "outbox":
		err = runOutbox(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "cqlsafe: unknown command %q (see cqlsafe help)\n", args[0])
		return 2
	}
	var ue usageError
	var ee exitError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "cqlsafe: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "cqlsafe: %v\n", err)
		return 1
	}
}

// usageError is a mistake in the command line: exit 2.
type usageError struct{ error }

// exitError ends the command with a code and no message (the output said it).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// flagSets keeps, per flag set, where its command writes (stderr) and how it prints
// its usage: the flag package's own output is discarded, so that a mistake is one line
// (printed once, by run) and only --help prints the whole usage.
var flagSets sync.Map // *flag.FlagSet → flagSetInfo

type flagSetInfo struct {
	stderr io.Writer
	usage  func()
}

func newFlagSet(name string, stderr io.Writer, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	flagSets.Store(fs, flagSetInfo{stderr: stderr, usage: func() {
		fmt.Fprintf(stderr, "usage: cqlsafe %s\n\n%s\n\nflags:\n", name, help)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}})
	return fs
}

// stderrOf is where fs's command writes its messages.
func stderrOf(fs *flag.FlagSet) io.Writer {
	if v, ok := flagSets.Load(fs); ok {
		return v.(flagSetInfo).stderr
	}
	return os.Stderr
}

// badDuration matches the flag package's error for a value a flag cannot take.
var badValue = regexp.MustCompile(`^invalid value "(.*)" for flag -([^:]+): `)

// flagErr is a parse error of fs: --help prints the usage (exit 0); a mistake is one
// line that says what to write, with a hint for a duration without its unit.
func flagErr(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		if v, ok := flagSets.Load(fs); ok {
			v.(flagSetInfo).usage()
		}
		return err
	}
	if m := badValue.FindStringSubmatch(err.Error()); m != nil {
		if f := fs.Lookup(m[2]); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isDur := g.Get().(time.Duration); isDur {
					if _, nerr := strconv.ParseFloat(m[1], 64); nerr == nil {
						return usageError{fmt.Errorf("%s: --%s %s: a duration needs its unit (%ss? %sms?)", commandName(fs), m[2], m[1], m[1], m[1])}
					}
					return usageError{fmt.Errorf("%s: --%s %q is not a duration (10s, 500ms, 2m)", commandName(fs), m[2], m[1])}
				}
			}
			return usageError{fmt.Errorf("%s: --%s %q: %s", commandName(fs), m[2], m[1], strings.TrimPrefix(err.Error(), m[0]))}
		}
	}
	return usageError{fmt.Errorf("%s: %v (see cqlsafe %s --help)", commandName(fs), err, commandName(fs))}
}

// parseMixed parses flags given before, between or after the positional arguments,
// which it returns in order.
func parseMixed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, flagErr(fs, err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// commandName is the command words of fs's name ("tombstone list" of "tombstone list
// FILE [flags]").
func commandName(fs *flag.FlagSet) string {
	var words []string
	for _, w := range strings.Fields(fs.Name()) {
		if strings.ToLower(w) != w || strings.ContainsAny(w, "[]-|.") {
			break
		}
		words = append(words, w)
	}
	return strings.Join(words, " ")
}

// parse parses flags and rejects positional arguments.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return flagErr(fs, err)
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q", commandName(fs), fs.Arg(0))}
	}
	return nil
}
