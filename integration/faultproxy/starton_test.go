package faultproxy

import (
	"net"
	"runtime"
	"strings"
	"testing"
)

func TestStartOnLoopbackOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("127.0.0.21 answers on Linux (all of 127/8); elsewhere only 127.0.0.1 may")
	}
	for _, host := range []string{"10.0.0.1", "0.0.0.0", "localhost", ""} {
		if p, err := StartOn(host, "127.0.0.1:9"); err == nil {
			p.Close()
			t.Errorf("StartOn(%q): listening, want an error (loopback only)", host)
		}
	}
	p, err := StartOn("127.0.0.21", "127.0.0.1:9")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !strings.HasPrefix(p.Addr(), "127.0.0.21:") {
		t.Fatalf("Addr() = %s, want 127.0.0.21:port", p.Addr())
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("dial the proxy: %v", err)
	}
	c.Close()
}
