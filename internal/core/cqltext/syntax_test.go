package cqltext

import (
	"strings"
	"testing"
)

func check(t *testing.T, stmt string) *SyntaxError {
	t.Helper()
	toks, err := Lex(stmt)
	if err != nil {
		t.Fatalf("lex %q: %v", stmt, err)
	}
	return CheckSyntax(toks)
}

func TestCheckSyntaxAccepts(t *testing.T) {
	for _, s := range []string{
		`INSERT INTO t (id, v) VALUES (?, ?)`,
		`INSERT INTO ks.t (id, v) VALUES (1, 'x') IF NOT EXISTS USING TTL 10`,
		`INSERT INTO t (id, v) VALUES (:id, :v) USING TTL ? AND TIMESTAMP ?;`,
		`INSERT INTO t JSON '{"id": 1}' DEFAULT UNSET`,
		`INSERT INTO t (id, l, s, m, u, tu, vec) VALUES (1, [1, 2], {'a'}, {'k': 1}, {f: 1, g: 'x'}, (1, 'a'), [0.1, -2e3])`,
		`INSERT INTO t (id, u) VALUES (550e8400-e29b-41d4-a716-446655440000, now())`,
		`INSERT INTO t (id, b, d) VALUES (uuid(), 0xCAFE, 1h30m)`,
		`INSERT INTO "Quoted" ("Id", v) VALUES (?, null)`,
		`UPDATE t SET v = ?, n = n + 1, l = l + [1], l = [0] + l, m['k'] = 2, u.f = 3, s += {'a'}, c -= 1 WHERE id = ? IF v = 'base' AND m['k'] > 1`,
		`UPDATE t USING TTL 5 SET v = (int) ? WHERE id IN (1, 2) AND c > ? IF EXISTS`,
		`UPDATE t SET v = ? WHERE id IN ? AND (c1, c2) > (?, ?)`,
		`DELETE FROM t WHERE id = ? AND c0 = uuid() AND c1 > ? AND c1 <= ?`,
		`DELETE v, l[1], m['k'], u.f FROM ks.t USING TIMESTAMP 10 WHERE id = 1 IF EXISTS`,
		`SELECT * FROM t WHERE id = ?`,
		`SELECT id, WRITETIME(v), TTL(v), count(*), CAST(x AS text) AS c, m['k'], token(id) FROM t WHERE token(id) > token(?) GROUP BY id ORDER BY c DESC PER PARTITION LIMIT 1 LIMIT 10 ALLOW FILTERING`,
		`SELECT JSON DISTINCT id FROM t`,
		`SELECT id FROM t WHERE tags CONTAINS 'a' AND m CONTAINS KEY 'k' AND name LIKE 'a%'`,
		`SELECT id FROM t ORDER BY vec ANN OF [1.0, 2.0] LIMIT 3`,
		`SELECT v FROM t WHERE id = ? AND c = -1 + 2 * 3`,
		`BEGIN BATCH INSERT INTO a (k) VALUES (1); UPDATE b SET v = 1 WHERE k = 2; DELETE FROM c WHERE k = 3; APPLY BATCH`,
		`BEGIN UNLOGGED BATCH USING TIMESTAMP 5 INSERT INTO a (k) VALUES (1) APPLY BATCH;`,
		`BEGIN COUNTER BATCH UPDATE c SET n = n + 1 WHERE k = 1; APPLY BATCH`,
		`USE ks`, `TRUNCATE t`, `TRUNCATE TABLE ks.t`,
		`CREATE TABLE t (id int PRIMARY KEY)`, `DROP TABLE t`, `GRANT SELECT ON KEYSPACE k TO r`,
		`SELECT key, value FROM t WHERE key = ?`,
	} {
		if err := check(t, s); err != nil {
			t.Errorf("%s\n  refused: %v", s, err)
		}
	}
}

func TestCheckSyntaxRefuses(t *testing.T) {
	for _, c := range []struct{ stmt, want string }{
		{`INSERT INTO t (id v VALUES (1,`, `expected ")"`},
		{`INSERT INTO t (id, v) VALUES (1)`, "2 columns but 1 values"},
		{`INSERT t (id) VALUES (1)`, "expected INTO"},
		{`UPDATE SET WHERE`, "expected a table name"},
		{`UPDATE t SET v = 1`, "expected WHERE"},
		{`UPDATE t SET v = WHERE id = 1`, "expected a value"},
		{`SELEC * FORM x`, "expected a statement"},
		{`SELECT * FORM x`, "expected FROM"},
		{`SELECT * FROM t WHERE`, "expected a column name"},
		{`DELETE FROM t WHERE id = 1 AND`, "expected a column name"},
		{`DELETE FROM t`, "expected WHERE"},
		{`BEGIN BATCH INSERT INTO a (k) VALUES (1)`, "expected INSERT, UPDATE, DELETE or APPLY BATCH"},
		{`INSERT INTO t (id) VALUES (1) extra`, "expected the end of the statement"},
		{`INSERT INTO t (select) VALUES (1)`, "expected a column name"},
		{`UPDATE t SET v = 1 WHERE id == 1`, "expected a value"},
	} {
		err := check(t, c.stmt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n  got %v, want an error with %q", c.stmt, err, c.want)
		}
	}
}
