package cqltext

import (
	"errors"
	"testing"
)

func TestLex(t *testing.T) {
	toks, err := Lex(`SELECT "Quoted""Name", 'it''s', $$a;b$$, :bind, ? FROM t -- x` + "\n" + `/* y */ WHERE a >= 1.5e-3;`)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		k    Kind
		text string
	}{{Ident, "SELECT"}, {QIdent, `Quoted"Name`}, {Punct, ","}, {String, "it's"}, {Punct, ","}, {String, "a;b"},
		{Punct, ","}, {Bind, ":bind"}, {Punct, ","}, {Bind, "?"}, {Ident, "FROM"}, {Ident, "t"}, {Ident, "WHERE"},
		{Ident, "a"}, {Punct, ">="}, {Number, "1.5e-3"}, {Punct, ";"}}
	if len(toks) != len(want) {
		t.Fatalf("%d tokens: %+v", len(toks), toks)
	}
	for i, w := range want {
		if toks[i].Kind != w.k || toks[i].Text != w.text {
			t.Errorf("token %d = %v %q, want %v %q", i, toks[i].Kind, toks[i].Text, w.k, w.text)
		}
	}
	if toks[1].End-toks[1].Pos != len(`"Quoted""Name"`) {
		t.Errorf("End of quoted identifier: %d..%d", toks[1].Pos, toks[1].End)
	}
	for _, bad := range []string{"'open", `"open`, "/* open", "$$ open", "a # b"} {
		var le *LexError
		if _, err := Lex(bad); !errors.As(err, &le) {
			t.Errorf("Lex(%q) err = %v", bad, err)
		}
	}
}

func TestValidNameAndQuote(t *testing.T) {
	for _, ok := range []string{"a", "A_1", "events_2026"} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a-b", `a"b`, "a b", "ü", "012345678901234567890123456789012345678901234567890"} {
		if err := ValidName(bad); !errors.Is(err, ErrIdentifier) {
			t.Errorf("ValidName(%q) = %v", bad, err)
		}
	}
	if Quote(`we"ird`) != `"we""ird"` || QuoteQualified("ks", "T") != `"ks"."T"` {
		t.Fatal("quoting")
	}
}

func FuzzLex(f *testing.F) {
	f.Add(`INSERT INTO t (a) VALUES ('x', "y", $$z$$, :b, ?, 0xFF, -1.5E+3) -- c`)
	f.Fuzz(func(t *testing.T, s string) {
		toks, err := Lex(s)
		if err != nil {
			return
		}
		prev := 0
		for _, tok := range toks {
			if tok.Pos < prev || tok.End <= tok.Pos || tok.End > len(s) {
				t.Fatalf("token %+v out of order or bounds (len %d)", tok, len(s))
			}
			prev = tok.End
		}
		_ = Split(toks)
	})
}

// TestLexColonInLiterals: inside a map or UDT literal a `:` after a key or field name is
// a separator ({'x':true} holds no marker :true — found by review: every later marker
// index was off by one); after {, a comma, a colon or an opening bracket it starts a
// named marker.
func TestLexColonInLiterals(t *testing.T) {
	for _, tc := range []struct {
		cql   string
		binds []string
	}{
		{"UPDATE t SET m = {'x':true, 'y':now()} WHERE k = :k", []string{":k"}},
		{"UPDATE t SET u = {f0:1, f1:v} WHERE k = ?", []string{"?"}},
		{"UPDATE t SET m = {'x': :a, :b: 1, 'z':(:c, :d)} WHERE k = :k", []string{":a", ":b", ":c", ":d", ":k"}},
		{"UPDATE t SET m = {:a:1} WHERE k = 1", []string{":a"}},
		{"INSERT INTO t (k, v) VALUES (:k, :v)", []string{":k", ":v"}},
	} {
		toks, err := Lex(tc.cql)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tok := range toks {
			if tok.Kind == Bind {
				got = append(got, tok.Text)
			}
		}
		if len(got) != len(tc.binds) {
			t.Errorf("%s: markers %q, want %q", tc.cql, got, tc.binds)
			continue
		}
		for i := range got {
			if got[i] != tc.binds[i] {
				t.Errorf("%s: markers %q, want %q", tc.cql, got, tc.binds)
			}
		}
	}
}
