package keymigrate

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cqlsafe/cqlsafe/internal/core/table"
	"github.com/cqlsafe/cqlsafe/internal/core/value"
)

// scan holds the scan and copy statements of a migration.
type scan[TI any] struct {
	cql     string
	cols    []table.Column[TI] // key columns, then value columns
	nKey    int
	newCols []table.Column[TI]
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

func (m *Migration[TI, U]) scanner() (scan[TI], error) {
	keyCols := m.old.KeyColumns()
	sc := scan[TI]{cols: keyCols, nKey: len(keyCols), newCols: m.new.Columns()}
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
		case !m.isList(c):
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
// in the source. For a non-frozen UDT, fields says which fields hold a cell (TTL() is
// null for a field without one, which says nothing of the others'); nil for others.
func collectionTTL(ttls []*int, fields []bool) int {
	longest := 0
	for i, t := range ttls {
		if fields != nil && (i >= len(fields) || !fields[i]) {
			continue // a UDT field without a cell
		}
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
func (m *Migration[TI, U]) copiedLists(ctx context.Context, sc scan[TI], newKey []any, wts []*int64) (map[int]bool, error) {
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
		keyArgs, err := m.new.KeyArgs(q.key)
		if err != nil {
			return nil, err
		}
		cells, found, err := m.s.Row(ctx, q.cql, keyArgs, len(q.cols), false)
		if !found && err == nil {
			continue
		}
		have := make([]*int64, len(q.cols))
		for i := range have {
			if err == nil {
				have[i], err = optBigint(cells[i])
			}
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
	raw      map[string][]byte
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
func (m *Migration[TI, U]) copyRange(ctx context.Context, sc scan[TI], c backfillConfig, r int, lim *limiter, check func(newKey, oldKey []byte) error, written *atomic.Int64) (int64, int64, error) {
	scanCtx, stopScan := context.WithCancel(ctx)
	defer stopScan()
	lo, hi := tokenRange(r, c.ranges)
	// Every column is read in its serialised form and value columns are copied so,
	// byte for byte: an empty blob stays empty, a vector or UDT needs no Go type. The
	// Transform sees them decoded.
	n := sc.nKey + 3*(len(sc.cols)-sc.nKey) // key columns; each value with its (MAX)WRITETIME and TTL(s)
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
	closeErr := m.s.Iter(scanCtx, sc.cql, []any{lo, hi}, c.pageSize, n, func(cells [][]byte) bool {
		if err := lim.wait(scanCtx); err != nil {
			fail(err)
			return false
		}
		rc, err := m.readRow(sc, cells, check, staticDone)
		if err != nil {
			fail(err)
			return false
		}
		select {
		case slots <- struct{}{}:
		case <-scanCtx.Done():
			fail(scanCtx.Err()) // the range is not copied whole: an error, never "done"
			return false
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
		return true
	})
	wg.Wait()
	switch {
	case firstErr != nil:
		return rows.Load(), writes.Load(), firstErr
	case closeErr != nil:
		return rows.Load(), writes.Load(), fmt.Errorf("keymigrate: scan %s.%s range %d: %w", m.old.Keyspace, m.old.Name, r, closeErr)
	}
	return rows.Load(), writes.Load(), nil
}

// readRow turns the scanned row (each destination's bytes) into a rowCopy: decodes it,
// computes its new key and passes both keys to check.
func (m *Migration[TI, U]) readRow(sc scan[TI], cells [][]byte,
	check func(newKey, oldKey []byte) error, staticDone map[string]bool) (rowCopy, error) {
	nVal := len(sc.cols) - sc.nKey
	row := make(map[string]any, len(sc.cols))
	raw := make(map[string][]byte, len(sc.cols))
	wts := make([]*int64, nVal)
	ttls := make([]*int, nVal)
	elemTTLs := make([][]*int, nVal)
	vals := make([][]byte, len(sc.cols))
	for i, col := range sc.cols {
		if len(cells) < 1 {
			return rowCopy{}, fmt.Errorf("keymigrate: scan of %s.%s: short row", m.old.Keyspace, m.old.Name)
		}
		vals[i], cells = cells[0], cells[1:]
		if i < sc.nKey {
			continue
		}
		j := i - sc.nKey
		if len(cells) < 2 {
			return rowCopy{}, fmt.Errorf("keymigrate: scan of %s.%s: short row", m.old.Keyspace, m.old.Name)
		}
		var err error
		if wts[j], err = optBigint(cells[0]); err == nil {
			if col.Collection {
				elemTTLs[j], err = intList(cells[1])
			} else {
				ttls[j], err = optInt(cells[1])
			}
		}
		if err != nil {
			return rowCopy{}, fmt.Errorf("keymigrate: column %s: write time or TTL: %w", col.Name, err)
		}
		cells = cells[2:]
	}
	for i, col := range sc.cols {
		if i >= sc.nKey && wts[i-sc.nKey] == nil {
			continue // null cell: nothing to copy
		}
		b := vals[i]
		if b == nil && i < sc.nKey {
			// A key column reads NULL only in a partition that holds static cells and no
			// rows: copying it under a made-up clustering value would write a row that
			// never existed.
			return rowCopy{}, fmt.Errorf("keymigrate: %s.%s: a partition with static cells and no rows (%s is null): copying one is not supported",
				m.old.Keyspace, m.old.Name, col.Name)
		}
		v, err := m.drv.Unmarshal(col.Type, b)
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
	return rowCopy{newKey: newKey, raw: raw, wts: wts, ttls: ttls, elemTTLs: elemTTLs}, nil
}

// writeRow writes one row into the new table: one INSERT per distinct (write time, TTL)
// among its cells. It returns the INSERTs sent.
func (m *Migration[TI, U]) writeRow(ctx context.Context, sc scan[TI], rc rowCopy) (int64, error) {
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
			var fields []bool
			if sc.cols[sc.nKey+j].IsUDT() {
				fields = value.UDTFields(rc.raw[sc.cols[sc.nKey+j].Name])
			}
			st.ttl = collectionTTL(rc.elemTTLs[j], fields)
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
				args = append(args, m.drv.RawOf(rc.raw[col.Name]))
				list = list || m.lists[col.Name]
			default:
				args = append(args, m.drv.Unset())
			}
		}
		// UNSET, not 0, when there is no TTL to carry: an explicit 0 would override
		// the new table's default_time_to_live; UNSET inherits it.
		var ttl any = m.drv.Unset()
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
		why := ""
		if list {
			why = listReason
		}
		if err := m.s.Write(ctx, insert, args, st.ts, why); err != nil {
			return writes, fmt.Errorf("keymigrate: copy into %s.%s: %w", m.new.Keyspace, m.new.Name, err)
		}
		writes++
	}
	return writes, nil
}
