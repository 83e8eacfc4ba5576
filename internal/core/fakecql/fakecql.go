// Package fakecql is a CQL (protocol v4) server on loopback for tests and benchmarks
// that need a driver's whole client path without Cassandra: both gocql v1.7 and the
// Apache Cassandra Go driver v2 connect to it. Test code only: no production package
// imports it.
package fakecql

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a CQL (protocol v4) server on loopback that is just enough for a driver's
// session to connect and for Policy.Exec to run statements through the driver's whole
// client path — prepare, execute, retry policy, observers — without Cassandra: every
// write succeeds at once (RESULT Void). It answers the control connection's
// system.local query, USE, REGISTER and OPTIONS; a prepared statement's first bound
// column is an int and the others text (INSERT INTO kv (id, v) VALUES (?, ?)).
// Its own cost is in what a benchmark measures, the same for every arm.
type Server struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
	drop  func(id string, n int64) bool // the nth EXECUTE (1-based, all connections) of the statement prepared from text id gets no answer
	execs sync.Map                      // id → *atomic.Int64
}

// Start starts a Server, closed when tb ends. dropExecute (nil: none) says whether the
// nth EXECUTE (1-based, over all connections) of the statement prepared from text id
// goes unanswered: a lost response, the driver waits for its timeout.
func Start(tb testing.TB, dropExecute func(id string, n int64) bool) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	f := &Server{ln: ln, drop: dropExecute}
	f.wg.Add(1)
	go f.accept()
	tb.Cleanup(f.close)
	return f
}

// Addr is the server's host:port.
func (f *Server) Addr() string { return f.ln.Addr().String() }

func (f *Server) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

func (f *Server) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.serve(c)
		}()
	}
}

// CQL opcodes and result kinds.
const (
	fakeOpError     = 0x00
	fakeOpStartup   = 0x01
	fakeOpReady     = 0x02
	fakeOpOptions   = 0x05
	fakeOpSupported = 0x06
	fakeOpQuery     = 0x07
	fakeOpResult    = 0x08
	fakeOpPrepare   = 0x09
	fakeOpExecute   = 0x0A
	fakeOpRegister  = 0x0B

	fakeVoid      = 1
	fakeRows      = 2
	fakeKeyspace  = 3
	fakePrepared  = 4
	fakeTypeInt   = 0x0009
	fakeTypeText  = 0x000D
	fakeTypeUUID  = 0x000C
	fakeGlobalTbl = 0x0001
)

// serve answers one connection's requests in order.
func (f *Server) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	w := bufio.NewWriterSize(c, 64<<10)
	var hdr [9]byte
	var body, out []byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[5:]))
		if cap(body) < n {
			body = make([]byte, n)
		}
		body = body[:n]
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		op, res := fakeOpResult, out[:0]
		switch hdr[4] {
		case fakeOpStartup, fakeOpRegister:
			op = fakeOpReady
		case fakeOpOptions:
			op, res = fakeOpSupported, append(res, 0, 0) // an empty string multimap
		case fakeOpQuery:
			res = fakeQueryResult(res, longString(body))
		case fakeOpPrepare:
			res = fakePreparedResult(res, longString(body))
		case fakeOpExecute:
			id := shortString(body)
			ctr, _ := f.execs.LoadOrStore(id, new(atomic.Int64))
			if n := ctr.(*atomic.Int64).Add(1); f.drop != nil && f.drop(id, n) {
				continue // a lost response: the driver waits, the hedge answers
			}
			res = binary.BigEndian.AppendUint32(res, fakeVoid)
		default:
			op = fakeOpError
			res = binary.BigEndian.AppendUint32(res, 0x000A) // protocol error
			res = appendShortString(res, "fake server: unsupported opcode")
		}
		out = res
		var h [9]byte
		h[0], h[1], h[2], h[3], h[4] = 0x84, 0, hdr[2], hdr[3], byte(op)
		binary.BigEndian.PutUint32(h[5:], uint32(len(res)))
		_, _ = w.Write(h[:])
		_, _ = w.Write(res)
		if r.Buffered() == 0 { // answer what came together in one write
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// longString reads the [long string] a QUERY or PREPARE body starts with.
func longString(b []byte) string {
	if len(b) < 4 {
		return ""
	}
	n := int(binary.BigEndian.Uint32(b))
	if n < 0 || 4+n > len(b) {
		return ""
	}
	return string(b[4 : 4+n])
}

func fakeQueryResult(b []byte, stmt string) []byte {
	s := strings.ToUpper(strings.TrimSpace(stmt))
	switch {
	case strings.HasPrefix(s, "USE "):
		b = binary.BigEndian.AppendUint32(b, fakeKeyspace)
		return appendShortString(b, strings.Trim(strings.TrimSpace(stmt[4:]), `"`))
	case strings.HasPrefix(s, "SELECT SCHEMA_VERSION FROM SYSTEM.LOCAL"):
		// The v2 driver's schema agreement: one column.
		b = binary.BigEndian.AppendUint32(b, fakeRows)
		b = binary.BigEndian.AppendUint32(b, fakeGlobalTbl)
		b = binary.BigEndian.AppendUint32(b, 1)
		b = appendShortString(appendShortString(b, "system"), "local")
		b = binary.BigEndian.AppendUint16(appendShortString(b, "schema_version"), fakeTypeUUID)
		b = binary.BigEndian.AppendUint32(b, 1)
		b = binary.BigEndian.AppendUint32(b, 16)
		return append(b, 0x11, 0x1d, 0x2c, 0x10, 0x9d, 0x38, 0x4e, 0x5a, 0x9a, 0x1e, 0x2d, 0x5c, 0x51, 0x63, 0x7e, 0x02)
	case strings.HasPrefix(s, "SELECT") && strings.Contains(s, "SYSTEM.LOCAL"):
		// One row: key and host_id, all hostInfoFromMap needs.
		b = binary.BigEndian.AppendUint32(b, fakeRows)
		b = binary.BigEndian.AppendUint32(b, fakeGlobalTbl)
		b = binary.BigEndian.AppendUint32(b, 5)
		b = appendShortString(appendShortString(b, "system"), "local")
		b = binary.BigEndian.AppendUint16(appendShortString(b, "key"), fakeTypeText)
		b = binary.BigEndian.AppendUint16(appendShortString(b, "host_id"), fakeTypeUUID)
		b = binary.BigEndian.AppendUint16(appendShortString(b, "data_center"), fakeTypeText)
		b = binary.BigEndian.AppendUint16(appendShortString(b, "rack"), fakeTypeText)
		b = binary.BigEndian.AppendUint16(appendShortString(b, "schema_version"), fakeTypeUUID)
		b = binary.BigEndian.AppendUint32(b, 1)
		b = append(binary.BigEndian.AppendUint32(b, 5), "local"...)
		b = binary.BigEndian.AppendUint32(b, 16)
		b = append(b, 0x6b, 0x1d, 0x2c, 0x10, 0x9d, 0x38, 0x4e, 0x5a, 0x9a, 0x1e, 0x2d, 0x5c, 0x51, 0x63, 0x7e, 0x01)
		b = append(binary.BigEndian.AppendUint32(b, 3), "dc1"...)
		b = append(binary.BigEndian.AppendUint32(b, 5), "rack1"...)
		b = binary.BigEndian.AppendUint32(b, 16)
		return append(b, 0x11, 0x1d, 0x2c, 0x10, 0x9d, 0x38, 0x4e, 0x5a, 0x9a, 0x1e, 0x2d, 0x5c, 0x51, 0x63, 0x7e, 0x02)
	case strings.HasPrefix(s, "SELECT"):
		b = binary.BigEndian.AppendUint32(b, fakeRows)
		b = binary.BigEndian.AppendUint32(b, 0) // flags
		b = binary.BigEndian.AppendUint32(b, 0) // columns
		return binary.BigEndian.AppendUint32(b, 0)
	}
	return binary.BigEndian.AppendUint32(b, fakeVoid)
}

// fakePreparedResult prepares stmt: its id is its text, its first bound column an
// int, the others text; it returns no rows.
func fakePreparedResult(b []byte, stmt string) []byte {
	markers := strings.Count(stmt, "?")
	b = binary.BigEndian.AppendUint32(b, fakePrepared)
	id := stmt
	if len(id) > 200 {
		id = id[:200]
	}
	b = appendShortString(b, id) // [short bytes], like a [string]
	b = binary.BigEndian.AppendUint32(b, fakeGlobalTbl)
	b = binary.BigEndian.AppendUint32(b, uint32(markers))
	b = binary.BigEndian.AppendUint32(b, 1) // partition key: the first column
	b = binary.BigEndian.AppendUint16(b, 0)
	b = appendShortString(appendShortString(b, "ks"), "kv")
	for i := range markers {
		typ := uint16(fakeTypeText)
		if i == 0 {
			typ = fakeTypeInt
		}
		b = binary.BigEndian.AppendUint16(appendShortString(b, "c"+string(rune('a'+i%26))), typ)
	}
	b = binary.BigEndian.AppendUint32(b, 0x0004) // result metadata: none
	return binary.BigEndian.AppendUint32(b, 0)
}

func appendShortString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// shortString reads the [short bytes] an EXECUTE body starts with (the prepared id).
func shortString(b []byte) string {
	if len(b) < 2 {
		return ""
	}
	n := int(binary.BigEndian.Uint16(b))
	if 2+n > len(b) {
		return ""
	}
	return string(b[2 : 2+n])
}
