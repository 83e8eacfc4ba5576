package table

import (
	"errors"
	"strings"
	"testing"

	"github.com/cqlsafe/cqlsafe/internal/core/cqltype"
)

// fakeDriver describes a type by its tree and marshals only what these tests need: the
// Table's rules do not depend on a driver's codecs.
type fakeDriver struct{}

type unset struct{}

func (fakeDriver) TypeOf(t cqltype.Type) cqltype.Type { return t }
func (fakeDriver) TreeOf(t cqltype.Type) cqltype.Type { return t }
func (fakeDriver) Unset() any                         { return unset{} }
func (fakeDriver) Marshal(ti cqltype.Type, v any) ([]byte, error) {
	switch x := v.(type) {
	case int:
		if ti.Name == "int" {
			return []byte{byte(x >> 24), byte(x >> 16), byte(x >> 8), byte(x)}, nil
		}
	case string:
		if ti.Name == "text" {
			return []byte(x), nil
		}
	}
	return nil, errors.New("does not fit")
}
func (fakeDriver) Unmarshal(ti cqltype.Type, b []byte) (any, error) {
	if ti.Name == "text" {
		return string(b), nil
	}
	return int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3]), nil
}
func (d fakeDriver) Fits(ti cqltype.Type, native string, v any) error {
	if FastFits(native, v) {
		return nil
	}
	_, err := d.Marshal(ti, v)
	return err
}
func (fakeDriver) Bind(_ cqltype.Type, v any) (any, error) { return v, nil }
func (fakeDriver) Marshaler(any) bool                      { return false }
func (fakeDriver) Raw(any) ([]byte, bool)                  { return nil, false }
func (fakeDriver) RawOf(b []byte) any                      { return b }

func fakeTable(t testing.TB, release string) *Table[cqltype.Type] {
	t.Helper()
	tbl, err := Build[cqltype.Type](fakeDriver{}, "ks", "t", []ColumnDef[cqltype.Type]{
		{Name: "id", Role: PartitionKey, Validator: "int"},
		{Name: "seq", Role: ClusteringKey, Validator: "int"},
		{Name: "tier", Role: Static, Validator: "text"},
		{Name: "Name", Role: Regular, Validator: "text"},
		{Name: "tags", Role: Regular, Validator: "set<text>"},
		{Name: "frozen", Role: Regular, Validator: "frozen<list<int>>"},
		{Name: "age", Role: Regular, Validator: "int"},
		{Name: "tier2", Role: Regular, Validator: "text"},
	}, nil, release)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// TestBuild: columns in key, static, then regular order (regular and static by name);
// collections told by their frozen-ness; keys round-trip through the driver's codec.
func TestBuild(t *testing.T) {
	tbl := fakeTable(t, "")
	var names []string
	for _, c := range tbl.Columns() {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, " "); got != "id seq tier Name age frozen tags tier2" {
		t.Fatal(got)
	}
	if c, _ := tbl.Column("tags"); !c.Collection {
		t.Error("set<text> is a collection")
	}
	if c, _ := tbl.Column("frozen"); c.Collection {
		t.Error("frozen<list<int>> is not")
	}
	b, err := tbl.EncodeKey([]any{7, 9})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := tbl.DecodeKey(b); err != nil || k[0] != 7 || k[1] != 9 {
		t.Fatalf("%v %v", k, err)
	}
	if _, err := tbl.EncodeKey([]any{7, unset{}}); !errors.Is(err, ErrMissingKey) {
		t.Fatalf("UNSET key: %v", err)
	}
	if _, err := Build[cqltype.Type](fakeDriver{}, "ks", "t", []ColumnDef[cqltype.Type]{{Name: "v", Role: Regular, Validator: "int"}}, nil, ""); !errors.Is(err, ErrUnknownTable) {
		t.Fatalf("no partition key: %v", err)
	}
	vals, err := tbl.Values(map[string]any{"id": 1, "seq": 2, "tags": []string{}, "age": 0})
	if err != nil || vals[1] != 2 || vals[4] != 0 || vals[6] != (unset{}) {
		t.Fatalf("%v %v", vals, err)
	}
}

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{"UserID": "user_id", "FirstName": "first_name", "ID": "id",
		"HTTPServer": "http_server", "A": "a", "Größe": "größe", "Already_Snake": "already_snake"} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMemoBounded: statements of ever new column choices are still built, but the
// shared Table keeps at most memoMax of them.
func TestMemoBounded(t *testing.T) {
	tbl := fakeTable(t, "")
	names := []string{"Name", "age", "frozen", "tags", "tier"}
	built := 0
	for i := 0; i < 2*memoMax; i++ {
		var cols []string
		for j, n := range names {
			if i&(1<<j) != 0 {
				cols = append(cols, n)
			}
		}
		cells := Cell(i>>len(names)) & 7
		sel, err1 := tbl.SelectByKey(cells, cols...)
		scan, err2 := tbl.ScanRange(cells, cols...)
		if err1 != nil || err2 != nil || !strings.HasPrefix(sel, "SELECT ") || !strings.Contains(scan, "token(") {
			t.Fatalf("%v: %q %q %v %v", cols, sel, scan, err1, err2)
		}
		built += 2
	}
	stored := 0
	tbl.memo.m.Range(func(_, _ any) bool { stored++; return true })
	if built <= memoMax || stored == 0 || stored > memoMax {
		t.Fatalf("%d statements built, %d kept; want 1..%d", built, stored, memoMax)
	}
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in           string
		major, minor int
	}{
		{"4.1.10", 4, 1}, {"5.0.9", 5, 0}, {"6.0-alpha2", 6, 0}, {"5.0-SNAPSHOT", 5, 0}, {"3.11.17", 3, 11},
		{"", 0, 0}, {"x.y", 0, 0}, {"5", 0, 0}, {"-1.0", 0, 0},
	} {
		if v := parseVersion(tc.in); v.major != tc.major || v.minor != tc.minor || v.release != tc.in {
			t.Errorf("parseVersion(%q) = %+v, want %d.%d", tc.in, v, tc.major, tc.minor)
		}
	}
	if !(version{}).atLeast(5, 0) {
		t.Error("an unknown version must keep the 5.0 statements")
	}
	if parseVersion("4.1.10").atLeast(5, 0) || !parseVersion("5.0.9").atLeast(5, 0) || !parseVersion("6.0-alpha2").atLeast(5, 0) {
		t.Error("atLeast(5, 0)")
	}
	for _, tc := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"5.0.9", "", "4.1.10", "6.0-alpha2"}, "4.1.10"}, {[]string{"x", "5.0.9"}, "5.0.9"}} {
		if got := Oldest(tc.in...); got != tc.want {
			t.Errorf("Oldest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := fakeTable(t, "4.1.10").CassandraVersion(); got != "4.1.10" {
		t.Errorf("CassandraVersion %q", got)
	}
}
