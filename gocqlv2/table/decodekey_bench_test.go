package table

import "testing"

func BenchmarkTableDecodeKeyDecodeListInt(b *testing.B) {
	tbl := keyTable(&testing.T{}, "frozen<list<int>>")
	l := make([]int, 10000)
	k, err := tbl.EncodeKey([]any{1, l})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tbl.DecodeKey(k); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTableDecodeKeyDecodeMapTextText(b *testing.B) {
	tbl := keyTable(&testing.T{}, "frozen<map<text, text>>")
	m := map[string]string{}
	for i := range 1000 {
		m[string(rune('a'+i%26))+string(rune(i))] = "valuevaluevalue"
	}
	k, err := tbl.EncodeKey([]any{1, m})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tbl.DecodeKey(k); err != nil {
			b.Fatal(err)
		}
	}
}
