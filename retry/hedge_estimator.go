package retry

import (
	"slices"
	"time"
)

// delay is the current hedge delay.
func (h *hedger) delay() time.Duration { return time.Duration(h.delayNs.Load()) }

// record adds one request latency.
func (h *hedger) record(d time.Duration) {
	h.mu.Lock()
	h.ring[h.n%hedgeWindow] = int64(d)
	h.n++
	if h.n%hedgeEvery == 0 && h.n >= hedgeMinCount {
		h.recompute()
	}
	h.mu.Unlock()
}

// recompute sets the delay to the percentile of the window, within the bounds; h.mu
// held.
func (h *hedger) recompute() {
	n := min(h.n, hedgeWindow)
	s := h.scratch[:n]
	copy(s, h.ring[:n])
	slices.Sort(s)
	next := time.Duration(s[percentileIndex(h.cfg.percentile, n)])
	h.delayNs.Store(int64(max(h.cfg.floor, min(next, h.cfg.ceiling))))
}

// percentileIndex is the index of the q-th percentile in n sorted samples (n ≥ 1).
func percentileIndex(q float64, n int) int {
	return max(0, min(int(q*float64(n)+0.999999)-1, n-1))
}
