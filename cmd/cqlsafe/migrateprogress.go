package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cqlsafe/cqlsafe/keymigrate"
)

// progressView shows a backfill's progress on stderr: a bar redrawn in place on a
// terminal, plain lines every so often otherwise. Ranges done come from the lease
// table (all workers, everywhere); rows and rows/s are this process's.
type progressView struct {
	w      io.Writer
	bar    bool
	quiet  bool
	every  time.Duration
	status func(context.Context) (keymigrate.Status, error)

	rows    atomic.Int64
	started time.Time
	stopped chan struct{}
	done    chan struct{}

	mu        sync.Mutex
	last      keymigrate.Status
	haveLast  bool
	doneStart int // ranges done when this process started
	samples   []sample
}

type sample struct {
	at   time.Time
	rows int64
}

// isTerminal reports whether w is a character device (a terminal), without a
// dependency: a redirected or piped stderr is a file or a pipe.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newProgressView(w io.Writer, mode string, every time.Duration, status func(context.Context) (keymigrate.Status, error)) *progressView {
	v := &progressView{w: w, every: every, status: status, stopped: make(chan struct{}), done: make(chan struct{}), doneStart: -1}
	switch mode {
	case "bar":
		v.bar = true
	case "none":
		v.quiet = true
	case "lines":
	default:
		v.bar = isTerminal(w)
	}
	return v
}

// event counts rows as workers report them.
func (v *progressView) event(e keymigrate.WorkerEvent) {
	if e.Kind == "copied" {
		v.rows.Add(e.Rows)
	}
}

func (v *progressView) start(ctx context.Context) {
	v.started = time.Now()
	if v.quiet {
		close(v.done)
		return
	}
	redraw, poll := v.every, v.every
	if v.bar {
		redraw, poll = 500*time.Millisecond, 2*time.Second
	}
	go func() {
		defer close(v.done)
		tick := time.NewTicker(redraw)
		defer tick.Stop()
		var polled time.Time
		for {
			select {
			case <-v.stopped:
				if v.bar {
					v.draw()
					fmt.Fprintln(v.w)
				}
				return
			case <-ctx.Done():
				if v.bar {
					fmt.Fprintln(v.w)
				}
				return
			case <-tick.C:
			}
			if time.Since(polled) >= poll {
				polled = time.Now()
				sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				if st, err := v.status(sctx); err == nil {
					v.mu.Lock()
					v.last, v.haveLast = st, true
					if v.doneStart < 0 {
						v.doneStart = st.Done
					}
					v.mu.Unlock()
				}
				cancel()
			}
			v.draw()
		}
	}()
}

func (v *progressView) stop() {
	close(v.stopped)
	<-v.done
}

// rate is rows/s over the last 10 s.
func (v *progressView) rate(now time.Time, rows int64) float64 {
	v.samples = append(v.samples, sample{now, rows})
	for len(v.samples) > 2 && now.Sub(v.samples[0].at) > 10*time.Second {
		v.samples = v.samples[1:]
	}
	first := v.samples[0]
	if d := now.Sub(first.at).Seconds(); d > 0 {
		return float64(rows-first.rows) / d
	}
	if d := now.Sub(v.started).Seconds(); d > 0 {
		return float64(rows) / d
	}
	return 0
}

func (v *progressView) draw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := time.Now()
	rows := v.rows.Load()
	rate := v.rate(now, rows)
	st := v.last
	eta := "?"
	if v.haveLast {
		// Ranges finished by every worker since this process started, per second.
		if n := st.Done - v.doneStart; n > 0 && st.Done < st.RangesTotal {
			per := now.Sub(v.started) / time.Duration(n)
			eta = (per * time.Duration(st.RangesTotal-st.Done)).Round(time.Second).String()
		} else if st.Complete() {
			eta = "0s"
		}
	}
	if v.bar {
		const width = 30
		filled := 0
		if st.RangesTotal > 0 {
			filled = width * st.Done / st.RangesTotal
		}
		fmt.Fprintf(v.w, "\r\033[K[%s%s] %d/%d ranges  %d rows  %.0f rows/s  ETA %s",
			strings.Repeat("#", filled), strings.Repeat(".", width-filled), st.Done, st.RangesTotal, rows, rate, eta)
		return
	}
	fmt.Fprintf(v.w, "progress: %d/%d ranges done (%d claimed), %d rows copied here, %.0f rows/s, ETA %s, elapsed %v\n",
		st.Done, st.RangesTotal, st.Claimed, rows, rate, eta, now.Sub(v.started).Round(time.Second))
}
