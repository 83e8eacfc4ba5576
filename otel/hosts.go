package cqlsafeotel

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/gocql/gocql"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// maxHosts bounds the cache of host attributes (a cluster's hosts, and those that
// replaced them); past it they are built per attempt.
const maxHosts = 1024

// hostAttrs caches server.address and server.port per gocql host: formatting an IP
// and a port costs two allocations on every attempt otherwise. gocql never changes a
// host's connect address once set (HostInfo.update), so a host's entry stays right.
type hostAttrs struct {
	m sync.Map // *gocql.HostInfo → [2]attribute.KeyValue
	n atomic.Int64
}

func (c *hostAttrs) get(h *gocql.HostInfo) ([2]attribute.KeyValue, bool) {
	if h == nil {
		return [2]attribute.KeyValue{}, false
	}
	if a, ok := c.m.Load(h); ok {
		return a.([2]attribute.KeyValue), true
	}
	// Not h.ConnectAddress: it panics on a host without a valid address.
	host, port, err := net.SplitHostPort(h.ConnectAddressAndPort())
	if err != nil {
		return [2]attribute.KeyValue{}, false
	}
	p, _ := strconv.Atoi(port)
	a := [2]attribute.KeyValue{semconv.ServerAddress(host), semconv.ServerPort(p)}
	if c.n.Load() < maxHosts {
		if _, loaded := c.m.LoadOrStore(h, a); !loaded {
			c.n.Add(1)
		}
	}
	return a, true
}
