package outbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cqlsafe/cqlsafe/internal/core/engine"
)

type unsetValue struct{}

// testDriver is a driver with int batch types and no values of its own.
var testDriver = &Driver[int]{
	Values:     Values{Unset: unsetValue{}},
	BatchTypes: map[int]string{0: "logged", 1: "unlogged", 2: "counter"},
	Logged:     0, Unlogged: 1, Counter: 2,
	Rejected: func(err error) bool { return errors.Is(err, errRejected) },
}

var errRejected = errors.New("rejected by the server")

func write(id int, text string) *engine.OutcomeUnknownError[int] {
	return &engine.OutcomeUnknownError[int]{Idempotent: true, Timestamp: int64(1000 + id),
		Statements: []engine.Statement{{CQL: "INSERT INTO kv (id, v) VALUES (?, ?)", Values: []any{id, text}}}}
}

func open(t *testing.T, path string) *Outbox[int] {
	t.Helper()
	o, err := Open(path, testDriver)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// fill writes an outbox of n acknowledged records at path, of varied sizes, and
// returns its bytes.
func fill(t *testing.T, path string, n int) []byte {
	t.Helper()
	o, err := Open(path, testDriver)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := o.Append(write(i, string(bytes.Repeat([]byte("x"), i*7)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func timestamps(t *testing.T, o *Outbox[int]) []int64 {
	t.Helper()
	got, err := o.Pending()
	if err != nil {
		t.Fatal(err)
	}
	var ts []int64
	for _, e := range got {
		ts = append(ts, e.Timestamp)
	}
	return ts
}

func wantAll(n int) []int64 {
	var ts []int64
	for i := range n {
		ts = append(ts, int64(1000+i))
	}
	return ts
}

// TestOpenEveryBitFlipped: every bit of a small outbox file flipped in turn — header,
// lengths, checksums, payloads. Open either returns every acknowledged record intact or
// returns *CorruptError and leaves the file as it was: never fewer records and nil.
func TestOpenEveryBitFlipped(t *testing.T) {
	dir := t.TempDir()
	const n = 6
	orig := fill(t, filepath.Join(dir, "orig"), n)
	path := filepath.Join(dir, "outbox")
	corrupt := 0
	for i := range orig {
		for bit := range 8 {
			damaged := slices.Clone(orig)
			damaged[i] ^= 1 << bit
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			o, err := Open(path, testDriver)
			after, _ := os.ReadFile(path)
			if err != nil {
				var ce *CorruptError
				if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("byte %d bit %d: %v, want *CorruptError", i, bit, err)
				}
				if !bytes.Equal(after, damaged) {
					t.Fatalf("byte %d bit %d: Open changed a corrupt file", i, bit)
				}
				corrupt++
				continue
			}
			got := timestamps(t, o)
			o.Close()
			if !slices.Equal(got, wantAll(n)) {
				t.Fatalf("byte %d bit %d: Open returned nil and records %v, want %v", i, bit, got, wantAll(n))
			}
		}
	}
	t.Logf("%d flips of %d bytes: %d reported corrupt, the rest read every record", len(orig)*8, len(orig), corrupt)
}

// TestOpenCutsTornTails: what a crash in the middle of an append leaves is cut off and
// reported; the acknowledged records stay.
func TestOpenCutsTornTails(t *testing.T) {
	dir := t.TempDir()
	good := fill(t, filepath.Join(dir, "good"), 3)
	next := Frame([]byte(`{"ts":9,"stmts":[{"cql":"INSERT INTO kv (id) VALUES (9)"}]}`))
	for _, c := range []struct {
		name string
		tail []byte
	}{
		{"cut header", next[:5]},
		{"cut payload", next[:len(next)-3]},
		{"zero-filled frame", make([]byte, len(next))},
		{"frame, zeros at its end", append(slices.Clone(next[:len(next)-10]), make([]byte, 10)...)},
		{"zeros past the end", make([]byte, 5000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "outbox")
			if err := os.WriteFile(path, append(slices.Clone(good), c.tail...), 0o600); err != nil {
				t.Fatal(err)
			}
			o := open(t, path)
			if got := timestamps(t, o); !slices.Equal(got, wantAll(3)) {
				t.Fatalf("records %v, want %v", got, wantAll(3))
			}
			if cut := o.Cut(); cut.Offset != int64(len(good)) || cut.Bytes != int64(len(c.tail)) {
				t.Errorf("Cut() = %+v, want offset %d, %d bytes", cut, len(good), len(c.tail))
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, good) {
				t.Errorf("file is %d bytes after the cut, want %d", len(after), len(good))
			}
		})
	}
	o := open(t, filepath.Join(dir, "good"))
	if cut := o.Cut(); cut != (Cut{}) {
		t.Errorf("nothing to cut: Cut() = %+v", cut)
	}
}

// TestOpenDamageNotCut: damage that is not a torn append is reported, and the file is
// left as it was — a length flipped so it runs past the end of the file while intact
// records follow (every later record would be lost), a last record whose checksum
// fails, a length over the limit at the end.
func TestOpenDamageNotCut(t *testing.T) {
	dir := t.TempDir()
	orig := fill(t, filepath.Join(dir, "orig"), 10)
	o := open(t, filepath.Join(dir, "orig"))
	entries, err := o.List()
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	lengthByte := func(rec int) int { return int(entries[rec].Offset) + 1 } // second byte of the big-endian length
	for _, c := range []struct {
		name   string
		damage func(b []byte) []byte
		at     int64
	}{
		{"record 4's length overruns the file", func(b []byte) []byte { b[lengthByte(3)] ^= 0x40; return b }, entries[3].Offset},
		{"last record's checksum", func(b []byte) []byte { b[entries[9].Offset+5] ^= 1; return b }, entries[9].Offset},
		{"last record's payload", func(b []byte) []byte { b[len(b)-5] ^= 0x20; return b }, entries[9].Offset},
		{"last record's length grows", func(b []byte) []byte { b[entries[9].Offset+3] ^= 0x80; return b }, entries[9].Offset},
		{"garbage length at the end", func(b []byte) []byte { return append(b, "garbage!garbage!"...) }, int64(len(orig))},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "outbox")
			damaged := c.damage(slices.Clone(orig))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(path, testDriver)
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Offset != c.at {
				t.Fatalf("Open: %v; want *CorruptError at %d", err, c.at)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
				t.Fatal("Open changed a corrupt file")
			}
		})
	}
}

// TestOpenRefusesOtherFiles: a path that names something other than an outbox is
// refused and left as it was — small files, a length-like prefix, zeros, text, a
// directory — never truncated.
func TestOpenRefusesOtherFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"6 bytes", []byte("abcdef")},
		{"a large length", []byte{0x7f, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{"zeros", make([]byte, 1024)},
		{"a few zeros", make([]byte, 7)},
		{"text", []byte("host=127.0.0.1\nport=9042\n")},
		{"a frame that is not a record", Frame([]byte("not json"))},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(path, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if o, err := Open(path, testDriver); !errors.Is(err, ErrNotOutbox) {
				if o != nil {
					o.Close()
				}
				t.Fatalf("Open: %v, want ErrNotOutbox", err)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, c.data) {
				t.Fatalf("the file changed: %q", after)
			}
		})
	}
	if _, err := Open(t.TempDir(), testDriver); !errors.Is(err, ErrNotOutbox) {
		t.Errorf("Open(a directory): %v, want ErrNotOutbox", err)
	}
}

// TestOpenLegacyFile: a file written before outbox files had a header (frames from
// offset 0) is read and rewritten with the header; its torn tail is cut.
func TestOpenLegacyFile(t *testing.T) {
	dir := t.TempDir()
	withHeader := fill(t, filepath.Join(dir, "new"), 4)
	legacy := append(slices.Clone(withHeader[len(FileHeader):]), 0, 0, 1, 0, 9)
	path := filepath.Join(dir, "legacy")
	if err := os.WriteFile(path, legacy, 0o600); err != nil {
		t.Fatal(err)
	}
	o := open(t, path)
	if got := timestamps(t, o); !slices.Equal(got, wantAll(4)) {
		t.Fatalf("records %v, want %v", got, wantAll(4))
	}
	if cut := o.Cut(); cut.Bytes != 5 {
		t.Errorf("Cut() = %+v, want the 5-byte torn tail", cut)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, withHeader) {
		t.Errorf("rewritten file differs from one written with the header")
	}
}

// TestLockIsTheFile: the lock is on the file itself: a symlink or a hard link to a held
// outbox is refused (ErrLocked), also after a rewrite replaced the file, and the lock
// is released by Close.
func TestLockIsTheFile(t *testing.T) {
	if !OutboxLocks {
		t.Skip("no flock on this platform")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "outbox")
	o := open(t, path)
	if err := o.Append(write(1, "a")); err != nil {
		t.Fatal(err)
	}
	sym, hard := filepath.Join(dir, "sym"), filepath.Join(dir, "hard")
	if err := os.Symlink(path, sym); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, hard); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, sym, hard} {
		if o2, err := Open(p, testDriver); !errors.Is(err, ErrLocked) {
			if o2 != nil {
				o2.Close()
			}
			t.Fatalf("Open(%s) while held: %v, want ErrLocked", filepath.Base(p), err)
		}
	}
	// A rewrite puts a new file in place: still held.
	list, _ := o.List()
	if _, err := o.Drop(list[0].ID); err != nil {
		t.Fatal(err)
	}
	if o2, err := Open(sym, testDriver); !errors.Is(err, ErrLocked) {
		if o2 != nil {
			o2.Close()
		}
		t.Fatalf("Open after a rewrite: %v, want ErrLocked", err)
	}
	o.Close()
	open(t, sym).Close()
}

// TestRewriteThroughSymlink: an outbox opened through a symlink is rewritten where the
// link points: the link stays a link, and later appends reach the same file.
func TestRewriteThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "data", "outbox")
	if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "outbox")
	fill(t, target, 3)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	o := open(t, link)
	n, err := o.Replay(context.Background(), nil, func(_ context.Context, e *engine.OutcomeUnknownError[int], _ int) (TTLNote, error) {
		if e.Timestamp == 1001 {
			return TTLNone, nil
		}
		return TTLNone, errRejected
	})
	if n != 1 || err == nil {
		t.Fatalf("replay: %d applied, %v; want 1 applied and the rejected ones reported", n, err)
	}
	if err := o.Append(write(7, "later")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	o.Close()
	o = open(t, target)
	if got := timestamps(t, o); !slices.Equal(got, []int64{1000, 1002, 1007}) {
		t.Fatalf("the target holds %v, want [1000 1002 1007]", got)
	}
}

// TestReplayGoesPastRejected: a record Cassandra rejects (its table was dropped) is
// kept and reported, and the records after it are still replayed; an error that is not
// the record's (Cassandra unreachable) stops the replay, keeping the rest.
func TestReplayGoesPastRejected(t *testing.T) {
	o := open(t, filepath.Join(t.TempDir(), "outbox"))
	for i := range 5 {
		if err := o.Append(write(i, "v")); err != nil {
			t.Fatal(err)
		}
	}
	var sent []int64
	var rep ReplayReport
	n, err := o.Replay(context.Background(), &rep, func(_ context.Context, e *engine.OutcomeUnknownError[int], _ int) (TTLNote, error) {
		sent = append(sent, e.Timestamp)
		if e.Timestamp == 1001 {
			return TTLNone, fmt.Errorf("unconfigured table kv: %w", errRejected)
		}
		return TTLNone, nil
	})
	if n != 4 || rep.Rejected != 1 || rep.Kept != 1 || !errors.Is(err, errRejected) {
		t.Fatalf("replay: %d applied, report %+v, err %v; want 4 applied, 1 rejected and kept", n, rep, err)
	}
	if got := timestamps(t, o); !slices.Equal(got, []int64{1001}) {
		t.Fatalf("left %v, want [1001]", got)
	}
	for i := 5; i < 8; i++ {
		o.Append(write(i, "v"))
	}
	unreachable := errors.New("no hosts")
	sent, rep = nil, ReplayReport{}
	n, err = o.Replay(context.Background(), &rep, func(_ context.Context, e *engine.OutcomeUnknownError[int], _ int) (TTLNote, error) {
		sent = append(sent, e.Timestamp)
		if e.Timestamp == 1006 {
			return TTLNone, unreachable
		}
		if e.Timestamp == 1001 {
			return TTLNone, errRejected
		}
		return TTLNone, nil
	})
	if n != 1 || !errors.Is(err, unreachable) || !slices.Equal(sent, []int64{1001, 1005, 1006}) {
		t.Fatalf("replay: %d applied, sent %v, %v; want it to stop at 1006", n, sent, err)
	}
	if got := timestamps(t, o); !slices.Equal(got, []int64{1001, 1006, 1007}) {
		t.Fatalf("left %v", got)
	}
}

// TestListAndDrop: an operator lists the records and drops one by its ID; an unknown
// ID drops nothing.
func TestListAndDrop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outbox")
	o := open(t, path)
	for i := range 3 {
		if err := o.Append(write(i, "v")); err != nil {
			t.Fatal(err)
		}
	}
	list, err := o.List()
	if err != nil || len(list) != 3 {
		t.Fatalf("List: %d, %v", len(list), err)
	}
	for _, e := range list {
		if len(e.ID) != 16 || e.Write == nil || e.Err != nil || e.Recorded.IsZero() {
			t.Fatalf("entry %+v", e)
		}
	}
	if n, err := o.Drop(list[1].ID, "0123456789abcdef"); !errors.Is(err, ErrNoRecord) || n != 0 {
		t.Fatalf("Drop with an unknown ID: %d, %v; want ErrNoRecord and nothing dropped", n, err)
	}
	if got := timestamps(t, o); len(got) != 3 {
		t.Fatalf("an unknown ID dropped records: %v", got)
	}
	if n, err := o.Drop(list[1].ID); n != 1 || err != nil {
		t.Fatalf("Drop: %d, %v", n, err)
	}
	o.Close()
	o = open(t, path)
	if got := timestamps(t, o); !slices.Equal(got, []int64{1000, 1002}) {
		t.Fatalf("after Drop and reopen: %v", got)
	}
}

// TestOpenAndRewriteEdges: a file that only begins like the header, an earlier
// version's lock file, a relative path and a chdir, a re-pointed directory link, the
// file's permissions, a neighbour named like the rewrite's temporary file, crafted
// damage.
func TestOpenAndRewriteEdges(t *testing.T) {
	t.Run("a file that is a prefix of the header is not an outbox", func(t *testing.T) {
		for _, text := range []string{"C", "CQLSAFE", "CQLSAFE OUTBOX"} {
			path := filepath.Join(t.TempDir(), "notes")
			os.WriteFile(path, []byte(text), 0o600)
			if _, err := Open(path, testDriver); !errors.Is(err, ErrNotOutbox) {
				t.Errorf("%q: %v, want ErrNotOutbox", text, err)
			}
			if b, _ := os.ReadFile(path); string(b) != text {
				t.Errorf("%q became %q", text, b)
			}
		}
	})
	t.Run("an earlier version's lock file is honoured", func(t *testing.T) {
		if !OutboxLocks {
			t.Skip("no flock")
		}
		path := filepath.Join(t.TempDir(), "outbox")
		fill(t, path, 1)
		held, err := lockPath(path + ".lock")
		if err != nil {
			t.Fatal(err)
		}
		if o, err := Open(path, testDriver); !errors.Is(err, ErrLocked) {
			if o != nil {
				o.Close()
			}
			t.Fatalf("Open while an earlier version holds %s.lock: %v, want ErrLocked", path, err)
		}
		held.Close()
		open(t, path).Close()
	})
	t.Run("a relative path and a later chdir", func(t *testing.T) {
		d1, d2 := t.TempDir(), t.TempDir()
		t.Chdir(d1)
		o := open(t, "outbox")
		o.Append(write(0, "a"))
		o.Append(write(1, "b"))
		t.Chdir(d2)
		list, _ := o.List()
		if _, err := o.Drop(list[0].ID); err != nil {
			t.Fatal(err)
		}
		o.Append(write(5, "c"))
		o.Close()
		if _, err := os.Stat(filepath.Join(d2, "outbox")); err == nil {
			t.Error("the rewrite followed the chdir")
		}
		if got := timestamps(t, open(t, filepath.Join(d1, "outbox"))); !slices.Equal(got, []int64{1001, 1005}) {
			t.Errorf("d1/outbox holds %v, want [1001 1005]", got)
		}
	})
	t.Run("a directory link re-pointed: the held file is rewritten, no other", func(t *testing.T) {
		dir := t.TempDir()
		v1, v2 := filepath.Join(dir, "v1"), filepath.Join(dir, "v2")
		os.Mkdir(v1, 0o700)
		os.Mkdir(v2, 0o700)
		cur := filepath.Join(dir, "current")
		os.Symlink(v1, cur)
		a := open(t, filepath.Join(cur, "outbox"))
		a.Append(write(0, "a"))
		a.Append(write(1, "a"))
		os.Remove(cur)
		os.Symlink(v2, cur)
		b := open(t, filepath.Join(cur, "outbox"))
		b.Append(write(9, "b"))
		list, _ := a.List()
		if _, err := a.Drop(list[0].ID); err != nil {
			t.Fatal(err)
		}
		a.Close()
		b.Close()
		if got := timestamps(t, open(t, filepath.Join(v2, "outbox"))); !slices.Equal(got, []int64{1009}) {
			t.Errorf("v2/outbox holds %v, want b's [1009]", got)
		}
		if got := timestamps(t, open(t, filepath.Join(v1, "outbox"))); !slices.Equal(got, []int64{1001}) {
			t.Errorf("v1/outbox holds %v, want [1001]", got)
		}
	})
	t.Run("a rewrite keeps the file's permissions", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "outbox")
		fill(t, path, 2)
		os.Chmod(path, 0o640)
		o := open(t, path)
		list, _ := o.List()
		o.Drop(list[0].ID)
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
			t.Errorf("mode after a rewrite %v, want 0640", fi.Mode().Perm())
		}
	})
	t.Run("an outbox named like the rewrite's temporary file is left alone", func(t *testing.T) {
		dir := t.TempDir()
		other := filepath.Join(dir, "orders.tmp")
		fill(t, other, 3)
		open(t, filepath.Join(dir, "orders")).Close()
		if got := timestamps(t, open(t, other)); len(got) != 3 {
			t.Errorf("orders.tmp holds %v", got)
		}
	})
	t.Run("crafted damage does not make Open slow", func(t *testing.T) {
		pat := []byte{0x00, 0x10, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef, '{'}
		tail := bytes.Repeat(pat, (3<<20)/len(pat))
		start := time.Now()
		TornTail(tail)
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("TornTail on a crafted 3 MB tail took %v", d)
		}
	})
}
