package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseAndDraw(t *testing.T) {
	in := `goos: linux
BenchmarkReadAfterOverwrites/rows=10/naive-2         	       1	1136458215 ns/op	         1.546 p50-ms	         5.379 p99-ms	       200.0 tombstones/read
BenchmarkReadAfterOverwrites/rows=10/overwrite-2     	       1	1002580718 ns/op	         1.602 p50-ms	         4.043 p99-ms	         0 tombstones/read
BenchmarkReadAfterOverwrites/rows=100/naive-2        	       1	1042122483 ns/op	         2.466 p50-ms	         3.681 p99-ms	      2000 tombstones/read
BenchmarkReadAfterOverwrites/rows=100/overwrite-2    	       1	 949049377 ns/op	         2.151 p50-ms	         4.325 p99-ms	         0 tombstones/read
`
	s, err := parse(strings.NewReader(in))
	if err != nil || len(s["naive"]) != 2 || s["naive"][1].tombstones != 2000 || s["overwrite"][0].p99 != 4.043 {
		t.Fatalf("%+v %v", s, err)
	}
	var buf bytes.Buffer
	draw(&buf, s)
	if !strings.HasPrefix(buf.String(), "<svg") || strings.Count(buf.String(), "<polyline") != 6 {
		t.Fatalf("svg:\n%s", buf.String())
	}
}
