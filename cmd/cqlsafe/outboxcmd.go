package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cqlsafe/cqlsafe/outbox"
	"github.com/cqlsafe/cqlsafe/retry"
)

const outboxHelp = `list: the records of an outbox file (ID, when recorded, write timestamp, statements).
drop: remove records by ID — a write that will never be replayed (Cassandra rejects it,
or it was settled another way). replay: re-apply the records on --hosts, in --keyspace
(where statements that name no keyspace run), and remove the applied ones.
The outbox must not be open elsewhere (stop the service that uses it first).`

func runOutbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintf(stderr, "usage: cqlsafe outbox list FILE | drop FILE ID... | replay FILE --hosts H --keyspace KS [flags]\n\n%s\n", outboxHelp)
		if len(args) == 0 {
			return usageError{errors.New("outbox: name a subcommand")}
		}
		return flag.ErrHelp
	}
	sub := args[0]
	if sub != "list" && sub != "drop" && sub != "replay" {
		return usageError{fmt.Errorf("outbox: unknown subcommand %q (list, drop, replay)", sub)}
	}
	fs := newFlagSet("outbox "+sub+" FILE", stderr, outboxHelp)
	var cf connFlags
	if sub == "replay" {
		cf.register(fs, "keyspace the statements that name none run in (required)")
	}
	// The file (and IDs) may come before or after the flags.
	pos, err := parseMixed(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usageError{fmt.Errorf("outbox %s: name the outbox file", sub)}
	}
	path, ids := pos[0], pos[1:]
	switch {
	case sub == "drop" && len(ids) == 0:
		return usageError{errors.New("outbox drop: name the IDs to drop (from cqlsafe outbox list)")}
	case sub != "drop" && len(ids) > 0:
		return usageError{fmt.Errorf("outbox %s: unexpected argument %q", sub, ids[0])}
	case sub == "replay" && cf.keyspace == "":
		return usageError{errors.New("outbox replay: --keyspace is required")}
	}
	if sub == "replay" {
		if _, err := cf.cluster(); err != nil { // flag mistakes before the file is touched
			return err
		}
	}
	// An operator's typo must not create an empty outbox and report "no records".
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("outbox %s: %w", sub, err)
	}
	o, err := outbox.Open(path)
	if err != nil {
		return err
	}
	defer o.Close()
	if cut := o.Cut(); cut.Bytes > 0 {
		fmt.Fprintf(stderr, "cqlsafe: %s: cut a torn tail of %d bytes at offset %d (an append a crash interrupted; never acknowledged)\n", path, cut.Bytes, cut.Offset)
	}
	switch sub {
	case "list":
		list, err := o.List()
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tRECORDED\tTIMESTAMP\tWRITE")
		for _, e := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.ID, e.Recorded.Format(time.RFC3339), timestampOf(e), describeWrite(e))
		}
		if len(list) == 0 {
			fmt.Fprintln(tw, "(no records)")
		}
		return tw.Flush()
	case "drop":
		n, err := o.Drop(ids...)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "dropped %d record(s) from %s\n", n, path)
		return nil
	}
	s, err := cf.session(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	var rep outbox.ReplayReport
	n, err := o.Replay(ctx, s, retry.NewPolicy(), outbox.ReportTo(&rep))
	fmt.Fprintf(stdout, "applied %d (%d past their TTL: sent with TTL 1), kept %d (rejected by Cassandra %d)\n", n, rep.Expired, rep.Kept, rep.Rejected)
	if err != nil {
		return err
	}
	return nil
}

func timestampOf(e outbox.Entry) string {
	if e.Write == nil {
		return "?"
	}
	return fmt.Sprint(e.Write.Timestamp)
}

// describeWrite is one line: the statement (a batch's first, with the count), or why
// the record cannot be read. Values are not shown: they may be personal data.
func describeWrite(e outbox.Entry) string {
	if e.Write == nil {
		return fmt.Sprintf("(unreadable: %v)", e.Err)
	}
	if len(e.Write.Statements) == 0 {
		return "(no statement)"
	}
	cql := strings.Join(strings.Fields(e.Write.Statements[0].CQL), " ")
	if e.Write.Batch {
		return fmt.Sprintf("BATCH of %d: %s; …", len(e.Write.Statements), cql)
	}
	return cql
}
