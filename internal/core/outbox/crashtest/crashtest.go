// Package crashtest kills a process in the middle of outbox appends, again and again,
// and checks that every append acknowledged before a kill is in the file when it is
// opened again. Each driver's outbox tests run it on their own Open and Append.
package crashtest

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

const (
	envPath  = "CQLSAFE_CRASHTEST_PATH"
	envFirst = "CQLSAFE_CRASHTEST_FIRST"
)

// Outbox is what the test needs of a driver's outbox.
type Outbox struct {
	// Append opens the outbox at path and appends records first, first+1, … until
	// killed, calling ack(i) after the append of record i returned nil.
	Append func(path string, first int64, ack func(int64)) error
	// Records opens the outbox at path and returns the numbers of its records and how
	// many bytes of torn tail Open cut (Outbox.Cut).
	Records func(path string) (recs []int64, cut int64, err error)
}

// Child runs the appending side when the test binary was started by Kills; call it
// first in the test function. It never returns in the child.
func Child(o Outbox) {
	path := os.Getenv(envPath)
	if path == "" {
		return
	}
	first, _ := strconv.ParseInt(os.Getenv(envFirst), 10, 64)
	w := bufio.NewWriter(os.Stdout)
	err := o.Append(path, first, func(i int64) {
		fmt.Fprintln(w, i)
		w.Flush()
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

// Kills starts the test binary (running test, which must call Child first) rounds
// times on one outbox file, SIGKILLs it at a random moment while it appends, and after
// each kill opens the outbox and checks that every acknowledged record is there.
func Kills(t *testing.T, test string, rounds int, o Outbox) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "outbox")
	acked := map[int64]bool{}
	next := int64(1)
	killedMidAppend, torn := 0, 0
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
		cmd.Env = append(os.Environ(), envPath+"="+path, envFirst+"="+strconv.FormatInt(next, 10))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan int64, 1024)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if i, err := strconv.ParseInt(sc.Text(), 10, 64); err == nil {
					lines <- i
				}
			}
		}()
		// Kill after a few acknowledged appends and a random few milliseconds more:
		// most kills land inside an append (write, fsync).
		want := 3 + rand.IntN(20)
		got := 0
		deadline := time.After(30 * time.Second)
	wait:
		for got < want {
			select {
			case i, ok := <-lines:
				if !ok {
					break wait
				}
				acked[i] = true
				next = max(next, i+1)
				got++
			case <-deadline:
				t.Fatalf("round %d: the child acknowledged %d appends in 30s", round, got)
			}
		}
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		for i := range lines { // acknowledged before the kill took effect
			acked[i] = true
			next = max(next, i+1)
		}
		if err := cmd.Wait(); err == nil {
			t.Fatalf("round %d: the child exited on its own", round)
		}
		recs, cut, err := o.Records(path)
		if cut > 0 {
			torn++
		}
		if err != nil {
			t.Fatalf("round %d: open after a kill: %v", round, err)
		}
		have := map[int64]bool{}
		for _, r := range recs {
			have[r] = true
		}
		for i := range acked {
			if !have[i] {
				t.Fatalf("round %d: acknowledged record %d is gone (%d records, %d acknowledged)", round, i, len(recs), len(acked))
			}
		}
		if len(recs) > 0 && recs[len(recs)-1] >= next {
			killedMidAppend++ // written, not yet acknowledged
			next = recs[len(recs)-1] + 1
		}
	}
	t.Logf("%d kills, %d acknowledged records all kept; %d torn tails cut; %d kills fell after a write and before its acknowledgement", rounds, len(acked), torn, killedMidAppend)
}
