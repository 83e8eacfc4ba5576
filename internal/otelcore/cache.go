package otelcore

import (
	"sync"
	"sync/atomic"
)

// cowMap is a bounded read-mostly cache: readers load an immutable map through one
// atomic pointer (no lock, no allocation: a sync.Map boxes a struct key on every
// lookup), writers copy it. Its key spaces are small by design — statements,
// measurement attribute sets —, and writes stop at max.
type cowMap[K comparable, V any] struct {
	m  atomic.Pointer[map[K]V]
	mu sync.Mutex
}

func (c *cowMap[K, V]) load(k K) (V, bool) {
	if m := c.m.Load(); m != nil {
		v, ok := (*m)[k]
		return v, ok
	}
	var zero V
	return zero, false
}

// store adds k unless it is there (then the value there is returned) or the map holds
// max entries (then v is returned, uncached).
func (c *cowMap[K, V]) store(k K, v V, max int) V {
	if m := c.m.Load(); m != nil && len(*m) >= max {
		if have, ok := (*m)[k]; ok {
			return have
		}
		return v // full: no lock for what will not be stored
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.m.Load()
	if old != nil {
		if have, ok := (*old)[k]; ok {
			return have
		}
		if len(*old) >= max {
			return v
		}
	}
	n := make(map[K]V, 1+lenOf(old))
	if old != nil {
		for k, v := range *old {
			n[k] = v
		}
	}
	n[k] = v
	c.m.Store(&n)
	return v
}

func lenOf[K comparable, V any](m *map[K]V) int {
	if m == nil {
		return 0
	}
	return len(*m)
}
