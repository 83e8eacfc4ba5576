package hedge

import (
	"slices"
	"time"
)

// Delay is the current hedge delay.
func (h *Hedger[S]) Delay() time.Duration { return time.Duration(h.DelayNs.Load()) }

// Record adds one request latency.
func (h *Hedger[S]) Record(d time.Duration) {
	h.mu.Lock()
	h.ring[h.n%Window] = int64(d)
	h.n++
	if h.n%Every == 0 && h.n >= MinCount {
		h.recompute()
	}
	h.mu.Unlock()
}

// recompute sets the delay to the percentile of the window, within the bounds; h.mu
// held.
func (h *Hedger[S]) recompute() {
	n := min(h.n, Window)
	s := h.scratch[:n]
	copy(s, h.ring[:n])
	slices.Sort(s)
	next := time.Duration(s[PercentileIndex(h.Cfg.Percentile, n)])
	h.DelayNs.Store(int64(max(h.Cfg.Floor, min(next, h.Cfg.Ceiling))))
}

// PercentileIndex is the index of the q-th percentile in n sorted samples (n ≥ 1).
func PercentileIndex(q float64, n int) int {
	return max(0, min(int(q*float64(n)+0.999999)-1, n-1))
}
