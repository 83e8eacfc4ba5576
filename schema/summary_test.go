package schema

import "testing"

// TestSummaryWholeSentence: a template's summary is its comment's first sentence, whole
// when it runs over several comment lines.
func TestSummaryWholeSentence(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"-- a: one line.\n-- more.\nCREATE", "a: one line."},
		{"-- a: a sentence that runs over\n-- two lines. And another.\nCREATE", "a: a sentence that runs over two lines."},
		{"-- no full stop\nCREATE", "no full stop"},
		{"CREATE TABLE t (k int PRIMARY KEY)", ""},
	} {
		if got := summary(c.text); got != c.want {
			t.Errorf("summary(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
