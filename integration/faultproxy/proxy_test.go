package faultproxy

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// fakeServer answers every frame with a RESULT frame on the same stream.
func fakeServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				for {
					f, err := readFrame(c)
					if err != nil {
						return
					}
					resp := frame(0x84, int16(binary.BigEndian.Uint16(f[2:4])), OpResult, []byte{0, 0, 0, 1})
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}(c)
		}
	}()
	return ln.Addr().String()
}

func frame(version byte, stream int16, op byte, body []byte) []byte {
	f := make([]byte, headerSize, headerSize+len(body))
	f[0] = version
	binary.BigEndian.PutUint16(f[2:4], uint16(stream))
	f[4] = op
	binary.BigEndian.PutUint32(f[5:9], uint32(len(body)))
	return append(f, body...)
}

func query(text string) []byte {
	b := make([]byte, 4, 4+len(text)+3)
	binary.BigEndian.PutUint32(b, uint32(len(text)))
	b = append(b, text...)
	return append(b, 0, 1, 0) // consistency ONE, no flags
}

func TestDropAndForward(t *testing.T) {
	px, err := Start(fakeServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	px.SetRule(DropNext(1, Writes("INSERT INTO kv")))
	c, err := net.Dial("tcp", px.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(frame(4, 1, OpQuery, query("INSERT INTO kv (a) VALUES (1)"))) // dropped
	c.Write(frame(4, 2, OpQuery, query("SELECT * FROM kv")))              // forwarded
	c.Write(frame(4, 3, OpQuery, query("INSERT INTO kv (a) VALUES (2)"))) // forwarded
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	var streams []int16
	for i := 0; i < 2; i++ {
		f, err := readFrame(c)
		if err != nil {
			t.Fatal(err)
		}
		streams = append(streams, int16(binary.BigEndian.Uint16(f[2:4])))
	}
	if streams[0] != 2 || streams[1] != 3 || px.Stats().Dropped.Load() != 1 || px.Stats().Requests.Load() != 3 {
		t.Fatalf("responses %v, stats dropped=%d requests=%d", streams, px.Stats().Dropped.Load(), px.Stats().Requests.Load())
	}
}

func TestPauseResumeAndReset(t *testing.T) {
	px, err := Start(fakeServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	c, _ := net.Dial("tcp", px.Addr())
	defer c.Close()
	px.Pause()
	c.Write(frame(4, 1, OpQuery, query("SELECT 1")))
	c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := readFrame(c); err == nil {
		t.Fatal("response arrived while paused")
	}
	px.Resume()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := readFrame(c); err != nil {
		t.Fatalf("after resume: %v", err)
	}
	px.ResetAll()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.ReadAll(c); err != nil && !isClosed(err) {
		t.Fatalf("after reset: %v", err)
	}
}

func isClosed(err error) bool {
	ne, ok := err.(net.Error)
	return !ok || !ne.Timeout()
}

func TestRequestIsWrite(t *testing.T) {
	for cql, want := range map[string]bool{"INSERT INTO x": true, " update x": true, "DELETE FROM x": true,
		"BEGIN BATCH": true, "SELECT": false, "": false} {
		if got := (Request{Opcode: OpQuery, CQL: cql}).IsWrite(); got != want {
			t.Errorf("IsWrite(%q) = %v", cql, got)
		}
	}
	if !(Request{Opcode: OpBatch}).IsWrite() || (Request{Opcode: OpPrepare, CQL: "INSERT"}).IsWrite() {
		t.Fatal("opcode rules")
	}
}
