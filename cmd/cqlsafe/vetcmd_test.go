package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestVetTextParses: every line vet -v prints on stdout is file:line:col: …; the
// notes' section headings go to stderr.
func TestVetTextParses(t *testing.T) {
	var out, errs strings.Builder
	printVetText(&out, &errs,
		[]vetFinding{{File: "a.go", Line: 1, Column: 2, Message: "not-idempotent: x"}},
		[]vetFinding{{File: "a.go", Line: 3, Column: 4, Message: "not-analysed: y", Kind: "write", Retry: "not known: z"}},
		[]vetFinding{{File: "b.go", Line: 5, Column: 6, Message: "not-analysed: w", Kind: "read", Retry: "marked Idempotent(true)"}})
	line := regexp.MustCompile(`^[^:]+:\d+:\d+: `)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("stdout:\n%s", out.String())
	}
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Errorf("stdout line %q is not file:line:col: …", l)
		}
	}
	if !strings.Contains(errs.String(), "# not analysed: 1 writes") || !strings.Contains(errs.String(), "# not analysed: 1 reads") {
		t.Errorf("stderr:\n%s", errs.String())
	}
}
