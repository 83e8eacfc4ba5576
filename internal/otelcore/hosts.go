package otelcore

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// maxHosts bounds the cache of host attributes (a cluster's hosts, and those that
// replaced them); past it they are built per attempt.
const maxHosts = 1024

// hostAttrs caches server.address and server.port per driver host: formatting an IP
// and a port costs two allocations on every attempt otherwise. Both drivers keep a
// host's connect address once set (HostInfo.update), so a host's entry stays right.
type hostAttrs struct {
	m sync.Map // the driver's host (a pointer) → [2]attribute.KeyValue
	n atomic.Int64
}

// get returns h's attributes; address gives h's "host:port" (Driver.HostAddress).
func (c *hostAttrs) get(h any, address func(any) string) ([2]attribute.KeyValue, bool) {
	if h == nil || address == nil {
		return [2]attribute.KeyValue{}, false
	}
	if a, ok := c.m.Load(h); ok {
		return a.([2]attribute.KeyValue), true
	}
	host, port, err := net.SplitHostPort(address(h))
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
