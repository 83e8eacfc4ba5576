package keymigrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gocql/gocql"

	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
	"github.com/cqlsafe/cqlsafe/retry"
	"github.com/cqlsafe/cqlsafe/table"
)

// scan holds the scan and copy statements of a migration.
type scan struct {
	cql     string
	cols    []table.Column // key columns, then value columns
	nKey    int
	newCols []table.Column
	// lists are the non-frozen list value columns (index among value columns) that
	// are regular in the new table, listWT reads their MAXWRITETIME there by new key;
	// staticLists and staticListWT the same for static ones, by new partition key.
	lists, staticLists   []int
	listWT, staticListWT string
	// static are the value columns static in both tables: one cell per partition,
	// repeated on every row the scan reads, written with the first row of each new
	// partition in a range only.
	static []int
}

func (m *Migration) scanner() (scan, error) {
	keyCols := m.old.KeyColumns()
	sc := scan{cols: keyCols, nKey: len(keyCols), newCols: m.new.Columns()}
	names := make([]string, 0, len(keyCols)+len(m.values))
	for _, c := range keyCols {
		names = append(names, c.Name)
	}
	var lists, staticLists []string
	for j, name := range m.values {
		c, _ := m.old.Column(name)
		nc, _ := m.new.Column(name)
		sc.cols = append(sc.cols, c)
		names = append(names, name)
		if c.Role == table.Static && nc.Role == table.Static {
			sc.static = append(sc.static, j)
		}
		switch {
		case !isList(c):
		case nc.Role == table.Static:
			sc.staticLists = append(sc.staticLists, j)
			staticLists = append(staticLists, name)
		default:
			sc.lists = append(sc.lists, j)
			lists = append(lists, name)
		}
	}
	// Key columns by value; each value column with its (MAX)WRITETIME and TTL(s).
	var err error
	if sc.cql, err = m.old.ScanRange(table.CellValue|table.CellWriteTime|table.CellTTL, names...); err != nil {
		return sc, err
	}
	if len(lists) > 0 {
		if sc.listWT, err = m.new.SelectByKey(table.CellWriteTime, lists...); err != nil {
			return sc, err
		}
	}
	if len(staticLists) > 0 {
		if sc.staticListWT, err = m.new.SelectByPartitionKey(table.CellWriteTime, staticLists...); err != nil {
			return sc, err
		}
	}
	return sc, nil
}

// collectionTTL is the TTL to copy a collection with, from its elements' TTLs: none
// (0) when any element has none, else the longest, so no element expires sooner than
// in the source.
func collectionTTL(ttls []*int) int {
	longest := 0
	for _, t := range ttls {
		if t == nil || *t <= 0 {
			return 0
		}
		longest = max(longest, *t)
	}
	return longest
}

// copiedLists returns, for the row being copied, which non-frozen list columns (value
// column index) the new table already holds at the source's write time or later: a
// second copy at the same timestamp would append the elements again, and an older copy
// is shadowed anyway. A static list is read by partition key (Cassandra refuses a
// clustering restriction on a read of static columns alone).
func (m *Migration) copiedLists(ctx context.Context, sc scan, newKey []any, wts []*int64) (map[int]bool, error) {
	var skip map[int]bool
	for _, q := range []struct {
		cols []int
		cql  string
		key  []any
	}{{sc.lists, sc.listWT, newKey}, {sc.staticLists, sc.staticListWT, newKey[:min(len(m.new.PartitionKey), len(newKey))]}} {
		need := false
		for _, j := range q.cols {
			need = need || wts[j] != nil
		}
		if !need {
			continue
		}
		have := make([]*int64, len(q.cols))
		dest := make([]any, len(have))
		for i := range have {
			dest[i] = &have[i]
		}
		keyArgs, err := m.new.KeyArgs(q.key)
		if err != nil {
			return nil, err
		}
		err = m.s.Query(q.cql, keyArgs...).WithContext(ctx).Idempotent(true).Scan(dest...)
		if errors.Is(err, gocql.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("keymigrate: read list write times in %s.%s: %w", m.new.Keyspace, m.new.Name, err)
		}
		for i, j := range q.cols {
			if wts[j] != nil && have[i] != nil && *have[i] >= *wts[j] {
				if skip == nil {
					skip = map[int]bool{}
				}
				skip[j] = true
			}
		}
	}
	return skip, nil
}

// rowCopy is one source row, read and keyed, on its way to the new table: what a
// writer goroutine needs, copied out of the scan's buffers.
type rowCopy struct {
	newKey   []any
	raw      map[string]cqlvalue.Raw
	wts      []*int64
	ttls     []*int   // scalars
	elemTTLs [][]*int // collections
}

// copyRange copies one token range; check is called with each row's encoded new and old
// keys before it is written, and written (when not nil) counts the rows written. Up to
// c.inFlight rows are written at once while the scan reads on. The first error stops
// the scan; the writes in flight then end (with ctx, not cancelled by the error) before
// it is returned. A range copied without error was copied whole: a ctx ended midway is
// an error, whatever the scan had read by then.
func (m *Migration) copyRange(ctx context.Context, sc scan, c backfillConfig, r int, lim *limiter, check func(newKey, oldKey []byte) error, written *atomic.Int64) (int64, int64, error) {
	scanCtx, stopScan := context.WithCancel(ctx)
	defer stopScan()
	lo, hi := tokenRange(r, c.ranges)
	iter := m.s.Query(sc.cql, lo, hi).WithContext(scanCtx).PageSize(c.pageSize).Idempotent(true).Iter()
	nVal := len(sc.cols) - sc.nKey
	dest := make([]any, 0, sc.nKey+3*nVal)
	// Every column is read in its serialised form (cqlvalue.Scan) and value columns
	// are copied so, byte for byte: an empty blob stays empty, a vector or UDT needs no
	// Go type. The Transform sees them decoded.
	vals := make([]*cqlvalue.Scan, len(sc.cols))
	wts := make([]*int64, nVal)
	ttls := make([]*int, nVal)
	elemTTLs := make([][]*int, nVal)
	for i, col := range sc.cols {
		vals[i] = cqlvalue.NewScan(col.Type)
		dest = vals[i].Dest(dest)
		if i >= sc.nKey {
			j := i - sc.nKey
			if col.Collection {
				dest = append(dest, &wts[j], &elemTTLs[j])
			} else {
				dest = append(dest, &wts[j], &ttls[j])
			}
		}
	}
	var (
		wg           sync.WaitGroup
		slots        = make(chan struct{}, max(c.inFlight, 1))
		once         sync.Once
		firstErr     error
		rows, writes atomic.Int64
		// new partitions whose static cells this range has written (see scan.static)
		staticDone map[string]bool
	)
	if len(sc.static) > 0 {
		staticDone = map[string]bool{}
	}
	fail := func(err error) {
		once.Do(func() { firstErr = err; stopScan() })
	}
scan:
	for iter.Scan(dest...) {
		if err := lim.wait(scanCtx); err != nil {
			fail(err)
			break
		}
		rc, err := m.readRow(sc, vals, wts, ttls, elemTTLs, check, staticDone)
		// The scan allocates every value anew (cqlvalue.Raw, *int64, []*int): the row
		// keeps them, and the next Scan starts from nil.
		for j := range wts {
			wts[j], ttls[j], elemTTLs[j] = nil, nil, nil
		}
		if err != nil {
			fail(err)
			break
		}
		select {
		case slots <- struct{}{}:
		case <-scanCtx.Done():
			fail(scanCtx.Err()) // the range is not copied whole: an error, never "done"
			break scan
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			n, err := m.writeRow(ctx, sc, rc)
			writes.Add(n)
			if err != nil {
				fail(err)
				return
			}
			rows.Add(1)
			if written != nil {
				written.Add(1)
			}
		}()
	}
	closeErr := iter.Close()
	wg.Wait()
	switch {
	case firstErr != nil:
		return rows.Load(), writes.Load(), firstErr
	case closeErr != nil:
		return rows.Load(), writes.Load(), fmt.Errorf("keymigrate: scan %s.%s range %d: %w", m.old.Keyspace, m.old.Name, r, closeErr)
	}
	return rows.Load(), writes.Load(), nil
}

// readRow turns the scanned row into a rowCopy: decodes it, computes its new key and
// passes both keys to check.
func (m *Migration) readRow(sc scan, vals []*cqlvalue.Scan, wts []*int64, ttls []*int, elemTTLs [][]*int,
	check func(newKey, oldKey []byte) error, staticDone map[string]bool) (rowCopy, error) {
	row := make(map[string]any, len(sc.cols))
	raw := make(map[string]cqlvalue.Raw, len(sc.cols))
	for i, col := range sc.cols {
		if i >= sc.nKey && wts[i-sc.nKey] == nil {
			continue // null cell: nothing to copy
		}
		b := vals[i].Bytes()
		if b == nil {
			b = cqlvalue.Raw{} // a key is never NULL: an empty value (a blob 0x)
		}
		v, err := cqlvalue.Unmarshal(col.Type, b)
		if err != nil {
			if i < sc.nKey {
				return rowCopy{}, fmt.Errorf("keymigrate: column %s: %w", col.Name, err)
			}
			v = b // no Go type for it (e.g. a vector inside a UDT): its bytes
		}
		row[col.Name], raw[col.Name] = v, b
	}
	newKey, err := m.newKey(row)
	if err != nil {
		return rowCopy{}, err
	}
	nk, err := m.new.EncodeKey(newKey)
	if err != nil {
		return rowCopy{}, err
	}
	oldKeyVals := make([]any, sc.nKey)
	for i := range oldKeyVals {
		oldKeyVals[i] = row[sc.cols[i].Name]
	}
	ok, err := m.old.EncodeKey(oldKeyVals)
	if err != nil {
		return rowCopy{}, err
	}
	if err := check(nk, ok); err != nil {
		return rowCopy{}, err
	}
	if staticDone != nil {
		// Static cells go with the first row of each new partition: written again with
		// every row, a static list would be appended once per row in flight.
		pk, err := m.new.EncodePartitionKey(newKey[:len(m.new.PartitionKey)])
		if err != nil {
			return rowCopy{}, err
		}
		if staticDone[string(pk)] {
			for _, j := range sc.static {
				wts[j] = nil
			}
		}
		staticDone[string(pk)] = true
	}
	return rowCopy{newKey: newKey, raw: raw, wts: slices.Clone(wts), ttls: slices.Clone(ttls), elemTTLs: slices.Clone(elemTTLs)}, nil
}

// writeRow writes one row into the new table: one INSERT per distinct (write time, TTL)
// among its cells. It returns the INSERTs sent.
func (m *Migration) writeRow(ctx context.Context, sc scan, rc rowCopy) (int64, error) {
	nVal := len(sc.cols) - sc.nKey
	skip, err := m.copiedLists(ctx, sc, rc.newKey, rc.wts)
	if err != nil {
		return 0, err
	}
	// TTL 0: none.
	type stamp struct {
		ts  int64
		ttl int
	}
	groups := map[stamp][]string{}
	var order []stamp
	for j := 0; j < nVal; j++ {
		if rc.wts[j] == nil || skip[j] {
			continue
		}
		st := stamp{ts: *rc.wts[j]}
		switch {
		case sc.cols[sc.nKey+j].Collection:
			st.ttl = collectionTTL(rc.elemTTLs[j])
		case rc.ttls[j] != nil:
			st.ttl = *rc.ttls[j]
		}
		if _, ok := groups[st]; !ok {
			order = append(order, st)
		}
		groups[st] = append(groups[st], sc.cols[sc.nKey+j].Name)
	}
	if len(order) == 0 && len(skip) == 0 {
		// Key-only row: no cell to take a write time from. Timestamp 1 makes the
		// copy lose to anything written since.
		order = append(order, stamp{ts: 1})
	}
	var writes int64
	for _, st := range order {
		args := make([]any, 0, len(sc.newCols)+2)
		in := map[string]bool{}
		for _, name := range groups[st] {
			in[name] = true
		}
		list := false
		for i, col := range sc.newCols {
			switch {
			case i < len(rc.newKey):
				args = append(args, rc.newKey[i])
			case in[col.Name]:
				args = append(args, rc.raw[col.Name])
				list = list || m.lists[col.Name]
			default:
				args = append(args, gocql.UnsetValue)
			}
		}
		// UNSET, not 0, when there is no TTL to carry: an explicit 0 would override
		// the new table's default_time_to_live; UNSET inherits it.
		var ttl any = gocql.UnsetValue
		if st.ttl > 0 {
			ttl = st.ttl
		}
		// A tuple column is bound element by element, and left out when not copied.
		insert, args, err := m.new.InsertRow(table.UsingTTL|table.UsingTimestamp, args)
		if err != nil {
			return writes, err
		}
		args = append(args, ttl, st.ts)
		// The timestamp is in the statement (USING TIMESTAMP): pinned by construction.
		// A copy that carries a non-frozen list is sent once, never re-sent.
		opts := []retry.ExecOption{retry.AtTimestamp(st.ts)}
		if list {
			opts = append(opts, retry.NotRepeatable(listReason))
		}
		if err := m.policy.Exec(ctx, m.s.Query(insert, args...), opts...); err != nil {
			return writes, fmt.Errorf("keymigrate: copy into %s.%s: %w", m.new.Keyspace, m.new.Name, err)
		}
		writes++
	}
	return writes, nil
}
