// Command benchchart draws BENCHMARKS.md's chart from `go test -bench
// ReadAfterOverwrites` output: tombstone cells per read and read latency (p50, p99)
// against the number of rows overwritten, naive NULL inserts vs overwrite.Row.
//
//	go test -run XXX -bench ReadAfterOverwrites -benchtime 1x ./integration/suite | tee bench.txt
//	go run ./integration/cmd/benchchart < bench.txt > docs/overwrite-chart.svg
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

type point struct {
	rows                 float64
	tombstones, p50, p99 float64
}

var line = regexp.MustCompile(`^BenchmarkReadAfterOverwrites/rows=(\d+)/(naive|overwrite)-\d+\s+\d+\s+\d+ ns/op(.*)$`)
var metric = regexp.MustCompile(`([\d.]+) ([\w/-]+)`)

func main() {
	series, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchchart:", err)
		os.Exit(1)
	}
	if len(series["naive"]) == 0 || len(series["overwrite"]) == 0 {
		fmt.Fprintln(os.Stderr, "benchchart: no BenchmarkReadAfterOverwrites results on stdin")
		os.Exit(1)
	}
	draw(os.Stdout, series)
}

func parse(r io.Reader) (map[string][]point, error) {
	out := map[string][]point{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := line.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		rows, _ := strconv.ParseFloat(m[1], 64)
		p := point{rows: rows}
		for _, mm := range metric.FindAllStringSubmatch(m[3], -1) {
			v, _ := strconv.ParseFloat(mm[1], 64)
			switch mm[2] {
			case "tombstones/read":
				p.tombstones = v
			case "p50-ms":
				p.p50 = v
			case "p99-ms":
				p.p99 = v
			}
		}
		out[m[2]] = append(out[m[2]], p)
	}
	for _, s := range out {
		sort.Slice(s, func(i, j int) bool { return s[i].rows < s[j].rows })
	}
	return out, sc.Err()
}

const (
	width, height = 960, 420
	panelW        = 400
	panelH        = 300
	top           = 60
)

func draw(w io.Writer, series map[string][]point) {
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="24" font-size="16" text-anchor="middle">Reading a partition of N rows with 20 of 40 columns NULL: naive NULL inserts vs overwrite.Row</text>`+"\n", width/2)
	panel(w, 70, "tombstone cells per read (Cassandra trace)", series, func(p point) float64 { return p.tombstones }, false)
	panel(w, 540, "read latency, ms (p50 solid, p99 dashed)", series, func(p point) float64 { return p.p50 }, true)
	fmt.Fprintln(w, `<g font-size="12"><rect x="380" y="390" width="14" height="4" fill="#d62728"/><text x="400" y="396">naive (NULL bound)</text>`+
		`<rect x="540" y="390" width="14" height="4" fill="#1f77b4"/><text x="560" y="396">overwrite.Row</text></g>`)
	fmt.Fprintln(w, "</svg>")
}

func panel(w io.Writer, x0 float64, title string, series map[string][]point, y func(point) float64, latency bool) {
	var xs []float64
	maxY := 0.0
	for _, s := range series {
		for _, p := range s {
			xs = append(xs, p.rows)
			maxY = math.Max(maxY, y(p))
			if latency {
				maxY = math.Max(maxY, p.p99)
			}
		}
	}
	if maxY == 0 {
		maxY = 1
	}
	minX, maxX := xs[0], xs[0]
	for _, x := range xs {
		minX, maxX = math.Min(minX, x), math.Max(maxX, x)
	}
	lx := func(x float64) float64 {
		if maxX == minX {
			return x0
		}
		return x0 + (math.Log10(x)-math.Log10(minX))/(math.Log10(maxX)-math.Log10(minX))*panelW
	}
	ly := func(v float64) float64 { return top + panelH - v/maxY*panelH }
	fmt.Fprintf(w, `<text x="%.0f" y="%d" text-anchor="middle" font-size="13">%s</text>`+"\n", x0+panelW/2, top-12, title)
	fmt.Fprintf(w, `<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="black"/>`+"\n", x0, top+panelH, x0+panelW, top+panelH)
	fmt.Fprintf(w, `<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="black"/>`+"\n", x0, top, x0, top+panelH)
	for i := 0; i <= 4; i++ {
		v := maxY * float64(i) / 4
		fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="end">%s</text>`+"\n", x0-6, ly(v)+4, trim(v))
		fmt.Fprintf(w, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#ddd"/>`+"\n", x0, ly(v), x0+panelW, ly(v))
	}
	seen := map[float64]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			fmt.Fprintf(w, `<text x="%.0f" y="%d" text-anchor="middle">%s</text>`+"\n", lx(x), top+panelH+16, trim(x))
		}
	}
	fmt.Fprintf(w, `<text x="%.0f" y="%d" text-anchor="middle">rows in the partition (each overwritten once; log scale)</text>`+"\n", x0+panelW/2, top+panelH+34)
	colors := map[string]string{"naive": "#d62728", "overwrite": "#1f77b4"}
	for _, name := range []string{"naive", "overwrite"} {
		fmt.Fprintln(w, polyline(series[name], lx, func(p point) float64 { return ly(y(p)) }, colors[name], ""))
		if latency {
			fmt.Fprintln(w, polyline(series[name], lx, func(p point) float64 { return ly(p.p99) }, colors[name], `stroke-dasharray="5,4"`))
		}
	}
}

func polyline(s []point, lx func(float64) float64, ly func(point) float64, color, extra string) string {
	var pts []string
	for _, p := range s {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", lx(p.rows), ly(p)))
	}
	return fmt.Sprintf(`<polyline fill="none" stroke="%s" stroke-width="2" %s points="%s"/>`, color, extra, strings.Join(pts, " "))
}

func trim(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
