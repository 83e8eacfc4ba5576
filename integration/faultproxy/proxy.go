// Package faultproxy is a CQL-aware TCP proxy for fault injection between a client and a
// Cassandra node: it forwards every request, and can drop the response to chosen
// requests after they reached the server (the write happened; the client never hears),
// add latency, hold traffic (a hung node), reset connections, and answer for Cassandra
// with an error frame (Unavailable, Overloaded, a write timeout of a given write type…)
// before or after the request reached it.
//
// It understands CQL protocol v3/v4 framing (9-byte headers; gocql v1.7.0 speaks v4) and
// maps prepared statement ids to their text, so rules can match EXECUTE and BATCH
// requests by statement. It listens on loopback only.
package faultproxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// CQL opcodes the proxy looks at.
const (
	OpError    = 0x00
	OpStartup  = 0x01
	OpQuery    = 0x07
	OpResult   = 0x08
	OpPrepare  = 0x09
	OpExecute  = 0x0A
	OpBatch    = 0x0D
	headerSize = 9
)

// Request is a client request as a rule sees it.
type Request struct {
	Opcode byte
	Stream int16
	// CQL is the statement text: of a QUERY or PREPARE, of the prepared statement an
	// EXECUTE runs (when the proxy saw it prepared), or a BATCH's statements joined by
	// "\n".
	CQL string
	// Body is the raw request body (do not modify).
	Body []byte
}

// IsWrite reports whether the request may change data (QUERY, EXECUTE or BATCH whose
// text starts with INSERT, UPDATE, DELETE or BEGIN, or any BATCH).
func (r Request) IsWrite() bool {
	if r.Opcode == OpBatch {
		return true
	}
	if r.Opcode != OpQuery && r.Opcode != OpExecute {
		return false
	}
	s := strings.ToUpper(strings.TrimSpace(r.CQL))
	for _, p := range []string{"INSERT", "UPDATE", "DELETE", "BEGIN"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Action is what to do with a request: Forward, DropResponse, Reset, or an error frame
// from Reply or ForwardThenReply.
type Action struct {
	kind  actionKind
	frame ErrorFrame
}

type actionKind int

const (
	forward actionKind = iota
	dropResponse
	reset
	reply            // answer with frame; the request never reaches the server
	forwardThenReply // forward; swallow the server's response and answer with frame
	garbage          // forward; answer with a frame no protocol version has, then close
)

var (
	// Forward passes the request and its response.
	Forward = Action{}
	// DropResponse passes the request to the server and swallows its response.
	DropResponse = Action{kind: dropResponse}
	// Reset passes the request, then closes the client's connection before the response.
	Reset = Action{kind: reset}
	// Garbage passes the request, then answers with a frame header of protocol version
	// 15 and closes the connection: the driver fails the connection with a protocol
	// error ("unsupported protocol response version") after Cassandra applied the write.
	Garbage = Action{kind: garbage}
)

// Reply answers the request with e itself: the request never reaches Cassandra, so
// nothing was applied (what Unavailable or Overloaded mean).
func Reply(e ErrorFrame) Action { return Action{kind: reply, frame: e} }

// ForwardThenReply passes the request to Cassandra, which applies it, then answers the
// client with e instead of Cassandra's response (what a write timeout can mean).
func ForwardThenReply(e ErrorFrame) Action { return Action{kind: forwardThenReply, frame: e} }

// Rule decides the action for each request. It is called from several goroutines.
type Rule func(Request) Action

// Proxy forwards connections from its address to a target.
type Proxy struct {
	ln     net.Listener
	target string

	rule    atomic.Pointer[Rule]
	latency atomic.Int64 // ns each way
	hold    atomic.Pointer[chan struct{}]
	refuse  atomic.Bool

	mu       sync.Mutex
	conns    map[*pipe]struct{}
	prepared map[string]string // prepared id → text
	closed   bool

	stats Stats
	wg    sync.WaitGroup
}

// Stats counts what the proxy did.
type Stats struct {
	Requests atomic.Int64
	Dropped  atomic.Int64
	Resets   atomic.Int64
	Refused  atomic.Int64 // connections closed on accept (Refuse)
	Replied  atomic.Int64 // error frames sent in Cassandra's place
	// Hidden counts ERROR responses from Cassandra that a fault swallowed (dropped,
	// replaced or reset): the request failed on the server, so a test that assumed it
	// applied must not conclude anything from it.
	Hidden atomic.Int64
}

// Start listens on 127.0.0.1 (a random port) and forwards to target (host:port).
func Start(target string) (*Proxy, error) { return StartOn("127.0.0.1", target) }

// StartOn listens on a loopback address (a random port) and forwards to target. Proxies
// in front of several nodes want one address each: gocql v1.7's host policies drop
// hosts by IP alone (policies.go, cowHostList.remove), so one node going DOWN takes
// every node that shares its translated IP out of the query plan.
func StartOn(host, target string) (*Proxy, error) {
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("faultproxy: %q is not a loopback address", host)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listen: %w", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[*pipe]struct{}{}, prepared: map[string]string{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Port is the proxy's port.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Stats returns the proxy's counters.
func (p *Proxy) Stats() *Stats { return &p.stats }

// SetRule sets the rule for requests from now on; nil forwards everything.
func (p *Proxy) SetRule(r Rule) {
	if r == nil {
		p.rule.Store(nil)
		return
	}
	p.rule.Store(&r)
}

// SetLatency delays every frame by d in each direction (0 removes it).
func (p *Proxy) SetLatency(d time.Duration) { p.latency.Store(int64(d)) }

// Pause holds all traffic in both directions, as a hung node would, until Resume.
func (p *Proxy) Pause() {
	ch := make(chan struct{})
	p.hold.CompareAndSwap(nil, &ch)
}

// Resume releases traffic held by Pause.
func (p *Proxy) Resume() {
	if ch := p.hold.Swap(nil); ch != nil {
		close(*ch)
	}
}

// Refuse makes the proxy close every connection it accepts, before reaching Cassandra
// (on: a node that is down but its port still answers), until Refuse(false). Open
// connections stay; ResetAll closes them.
func (p *Proxy) Refuse(on bool) { p.refuse.Store(on) }

// ResetAll closes every open connection through the proxy (clients see a reset).
func (p *Proxy) ResetAll() {
	for _, c := range p.snapshot() {
		c.close()
		p.stats.Resets.Add(1)
	}
}

// snapshot returns the open connections; close them outside p.mu (close takes it).
func (p *Proxy) snapshot() []*pipe {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*pipe, 0, len(p.conns))
	for c := range p.conns {
		out = append(out, c)
	}
	return out
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for _, c := range p.snapshot() {
		c.close()
	}
	p.Resume()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refuse.Load() {
			client.Close()
			p.stats.Refused.Add(1)
			continue
		}
		server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			client.Close()
			continue
		}
		c := &pipe{p: p, client: client, server: server, drop: map[int16]bool{}, reset: map[int16]bool{}, garbage: map[int16]bool{}, replace: map[int16]ErrorFrame{}, prepare: map[int16]string{}}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.close()
			return
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); c.upstream() }()
		go func() { defer p.wg.Done(); c.downstream() }()
	}
}

type pipe struct {
	p              *Proxy
	client, server net.Conn
	once           sync.Once

	mu      sync.Mutex
	drop    map[int16]bool
	reset   map[int16]bool
	garbage map[int16]bool
	replace map[int16]ErrorFrame
	prepare map[int16]string

	wmu sync.Mutex // both directions write to the client: replies and responses
}

func (c *pipe) writeClient(frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.client.Write(frame)
	return err
}

func (c *pipe) close() {
	c.once.Do(func() {
		c.client.Close()
		c.server.Close()
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	})
}

func (c *pipe) wait() {
	if ch := c.p.hold.Load(); ch != nil {
		<-*ch
	}
	if d := c.p.latency.Load(); d > 0 {
		time.Sleep(time.Duration(d))
	}
}

func readFrame(r io.Reader) ([]byte, error) {
	hdr := make([]byte, headerSize)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[5:9])
	if n > 256<<20 {
		return nil, errors.New("faultproxy: frame too large")
	}
	frame := make([]byte, headerSize+int(n))
	copy(frame, hdr)
	if _, err := io.ReadFull(r, frame[headerSize:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// upstream: client → server. Every request is forwarded; the rule marks its stream.
func (c *pipe) upstream() {
	defer c.close()
	for {
		frame, err := readFrame(c.client)
		if err != nil {
			return
		}
		stream := int16(binary.BigEndian.Uint16(frame[2:4]))
		op := frame[4]
		body := frame[headerSize:]
		req := Request{Opcode: op, Stream: stream, Body: body}
		compressed := frame[1]&0x01 != 0
		if !compressed {
			req.CQL = c.p.statementText(op, body)
		}
		if op == OpPrepare && req.CQL != "" {
			c.mu.Lock()
			c.prepare[stream] = req.CQL
			c.mu.Unlock()
		}
		action := Forward
		if r := c.p.rule.Load(); r != nil && op != OpStartup {
			action = (*r)(req)
		}
		c.p.stats.Requests.Add(1)
		if action.kind == reply {
			c.p.stats.Replied.Add(1)
			c.wait()
			if err := c.writeClient(action.frame.encode(frame[0]|0x80, stream)); err != nil {
				return
			}
			continue
		}
		c.mu.Lock()
		switch action.kind {
		case dropResponse:
			c.drop[stream] = true
		case reset:
			c.reset[stream] = true
		case garbage:
			c.garbage[stream] = true
		case forwardThenReply:
			c.replace[stream] = action.frame
		}
		c.mu.Unlock()
		c.wait()
		if _, err := c.server.Write(frame); err != nil {
			return
		}
	}
}

// downstream: server → client, minus dropped responses.
func (c *pipe) downstream() {
	defer c.close()
	for {
		frame, err := readFrame(c.server)
		if err != nil {
			return
		}
		stream := int16(binary.BigEndian.Uint16(frame[2:4]))
		op := frame[4]
		c.mu.Lock()
		drop, reset, junk := c.drop[stream], c.reset[stream], c.garbage[stream]
		errFrame, replaced := c.replace[stream]
		delete(c.drop, stream)
		delete(c.reset, stream)
		delete(c.garbage, stream)
		delete(c.replace, stream)
		text, wasPrepare := c.prepare[stream]
		delete(c.prepare, stream)
		c.mu.Unlock()
		if wasPrepare && op == OpResult && frame[1]&0x01 == 0 {
			if body, ok := responseBody(frame[1], frame[headerSize:]); ok {
				c.p.rememberPrepared(body, text)
			}
		}
		if (drop || reset || replaced || junk) && op == OpError {
			c.p.stats.Hidden.Add(1)
		}
		if drop {
			c.p.stats.Dropped.Add(1)
			continue
		}
		if reset {
			c.p.stats.Resets.Add(1)
			return
		}
		if junk {
			c.p.stats.Resets.Add(1)
			head := []byte{0x8f, 0, 0, 0, OpError, 0, 0, 0, 0} // version 15: no protocol has it
			binary.BigEndian.PutUint16(head[2:4], uint16(stream))
			_ = c.writeClient(head)
			return
		}
		if replaced {
			c.p.stats.Replied.Add(1)
			frame = errFrame.encode(frame[0], stream)
		}
		c.wait()
		if err := c.writeClient(frame); err != nil {
			return
		}
	}
}

// responseBody skips what response flags put before the body: a tracing id (0x02),
// warnings (0x08) and a custom payload (0x04), in the protocol's order.
func responseBody(flags byte, b []byte) ([]byte, bool) {
	if flags&0x02 != 0 {
		if len(b) < 16 {
			return nil, false
		}
		b = b[16:]
	}
	if flags&0x08 != 0 {
		if len(b) < 2 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(b[0:2]))
		b = b[2:]
		for i := 0; i < n; i++ {
			var ok bool
			if _, b, ok = shortBytes(b); !ok {
				return nil, false
			}
		}
	}
	if flags&0x04 != 0 {
		if len(b) < 2 {
			return nil, false
		}
		n := int(binary.BigEndian.Uint16(b[0:2]))
		b = b[2:]
		for i := 0; i < n; i++ {
			var ok bool
			if _, b, ok = shortBytes(b); !ok {
				return nil, false
			}
			if len(b) < 4 {
				return nil, false
			}
			l := int(int32(binary.BigEndian.Uint32(b[0:4])))
			b = b[4:]
			if l > 0 {
				if len(b) < l {
					return nil, false
				}
				b = b[l:]
			}
		}
	}
	return b, true
}

// rememberPrepared records the id of a RESULT Prepared (kind 4) response.
func (p *Proxy) rememberPrepared(body []byte, text string) {
	if len(body) < 6 || binary.BigEndian.Uint32(body[0:4]) != 4 {
		return
	}
	n := int(binary.BigEndian.Uint16(body[4:6]))
	if len(body) < 6+n {
		return
	}
	p.mu.Lock()
	p.prepared[string(body[6:6+n])] = text
	p.mu.Unlock()
}

func (p *Proxy) preparedText(id []byte) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.prepared[string(id)]
}

// statementText extracts the CQL text a request carries or refers to.
func (p *Proxy) statementText(op byte, body []byte) string {
	switch op {
	case OpQuery, OpPrepare:
		s, _, ok := longString(body)
		if ok {
			return s
		}
	case OpExecute:
		id, _, ok := shortBytes(body)
		if ok {
			return p.preparedText(id)
		}
	case OpBatch:
		return p.batchText(body)
	}
	return ""
}

func (p *Proxy) batchText(body []byte) string {
	if len(body) < 3 {
		return ""
	}
	n := int(binary.BigEndian.Uint16(body[1:3]))
	rest := body[3:]
	var texts []string
	for i := 0; i < n && len(rest) > 0; i++ {
		kind := rest[0]
		rest = rest[1:]
		var ok bool
		if kind == 0 {
			var s string
			s, rest, ok = longString(rest)
			texts = append(texts, s)
		} else {
			var id []byte
			id, rest, ok = shortBytes(rest)
			texts = append(texts, p.preparedText(id))
		}
		if !ok || len(rest) < 2 {
			break
		}
		nv := int(binary.BigEndian.Uint16(rest[0:2]))
		rest = rest[2:]
		for j := 0; j < nv; j++ {
			if len(rest) < 4 {
				return strings.Join(texts, "\n")
			}
			l := int(int32(binary.BigEndian.Uint32(rest[0:4])))
			rest = rest[4:]
			if l > 0 {
				if len(rest) < l {
					return strings.Join(texts, "\n")
				}
				rest = rest[l:]
			}
		}
	}
	return strings.Join(texts, "\n")
}

func longString(b []byte) (string, []byte, bool) {
	if len(b) < 4 {
		return "", b, false
	}
	n := int(binary.BigEndian.Uint32(b[0:4]))
	if n < 0 || len(b) < 4+n {
		return "", b, false
	}
	return string(b[4 : 4+n]), b[4+n:], true
}

func shortBytes(b []byte) ([]byte, []byte, bool) {
	if len(b) < 2 {
		return nil, b, false
	}
	n := int(binary.BigEndian.Uint16(b[0:2]))
	if len(b) < 2+n {
		return nil, b, false
	}
	return b[2 : 2+n], b[2+n:], true
}
