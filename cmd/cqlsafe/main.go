// Command cqlsafe demonstrates and checks cqlsafe's patterns against a real Cassandra.
//
//	cqlsafe demo [--hosts host:port,...]
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
)

const usage = `cqlsafe — safe-to-retry, cheap-to-overwrite writes for Apache Cassandra

usage:
  cqlsafe demo [flags]     show the patterns at work against a real Cassandra
  cqlsafe help             this text

Run "cqlsafe COMMAND --help" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code: 0 success, 1 the
// command ran and found a problem, 2 a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "demo":
		err = runDemo(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "cqlsafe: unknown command %q (see cqlsafe help)\n", args[0])
		return 2
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "cqlsafe: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "cqlsafe: %v\n", err)
		return 1
	}
}

type usageError struct{ error }

func newFlagSet(name string, stderr io.Writer, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: cqlsafe %s\n\n%s\nflags:\n", name, help)
		fs.PrintDefaults()
	}
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}
