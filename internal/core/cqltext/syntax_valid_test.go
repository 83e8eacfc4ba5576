package cqltext

import "testing"

// TestCheckSyntaxValidCQL: statements Cassandra 4.1/5.0 accept (a reviewer's list,
// checked against its Parser.g) are never refused.
func TestCheckSyntaxValidCQL(t *testing.T) {
	for _, s := range []string{
		// keywords as names
		`SELECT key, type, value, ttl, timestamp, count, writetime, maxwritetime, json, distinct, cast, as, values, filtering, group, per, partition, like, contains, exists, default, unset, ann, vector, between FROM t`,
		`SELECT json FROM t`,
		`SELECT json, v FROM t`,
		`SELECT json.f FROM t`,
		`SELECT distinct FROM t`,
		`SELECT distinct, v FROM t`,
		`SELECT JSON json FROM t`,
		`SELECT DISTINCT distinct FROM t`,
		`SELECT replace FROM t`,
		`INSERT INTO replace (replace) VALUES (1)`,
		`INSERT INTO json (key, ttl, timestamp) VALUES (1, 2, 3) USING TTL 1 AND TIMESTAMP 2`,
		`INSERT INTO ks.json JSON '{}'`,
		`UPDATE type SET value = 1, ttl = 2, "select" = 3 WHERE key = 1`,
		`UPDATE t SET v = 1 WHERE k = 1 IF exists = 1`,
		`DELETE ttl, timestamp FROM t WHERE key = 1`,
		`SELECT * FROM t WHERE filtering = 1 ALLOW FILTERING`,
		`SELECT * FROM t WHERE per = 1 PER PARTITION LIMIT 1`,
		`SELECT * FROM t GROUP BY group`,
		`SELECT * FROM t ORDER BY ann ASC`,
		`SELECT "" FROM t`,
		// literals
		`INSERT INTO t (a,b,c,d,e,f,g,h) VALUES (1y2mo3w4d5h6m7s8ms9us10ns, P1Y2M, PT2H30M, P2W, -1h, P1Y2M3DT4H5M6S, 3h, 0xcafe)`,
		`INSERT INTO t (a) VALUES (P0001-02-03T04:05:06)`,
		`INSERT INTO t (a) VALUES (1µs)`,
		`INSERT INTO t (a) VALUES (-P0001-02-03T04:05:06)`,
		`INSERT INTO t (a,b,c,d,e,f,g,h,i) VALUES (123e4567-e89b-12d3-a456-426614174000, -5, -1.5e-3, 1.5E+10, NaN, -NaN, Infinity, -Infinity, true)`,
		`INSERT INTO t (a,b) VALUES (0x, FALSE)`,
		`INSERT INTO t (a) VALUES (deadbeef-dead-beef-dead-beefdeadbeef)`,
		`INSERT INTO t (a) VALUES (00000000-0000-0000-0000-000000000000)`,
		`INSERT INTO t (a) VALUES ($$it's$$)`,
		`INSERT INTO t (a) VALUES ('it''s')`,
		// collections / udt / tuple / vector
		`INSERT INTO t (a,b,c,d,e) VALUES ({'a': [1, 2], 'b': [3]}, {(1, 'x'), (2, 'y')}, {f: {g: 1}, "H": [1]}, ((1, 2), 3), [[1.0, 2.0], [3.0]])`,
		`INSERT INTO t (a,b) VALUES ({}, [])`,
		`INSERT INTO t (a) VALUES ({'k': :v})`,
		`INSERT INTO t (a) VALUES ({f: :v, g: ?})`,
		`INSERT INTO t (a) VALUES ({:k: :v})`,
		`INSERT INTO t (a) VALUES ({'k': (int) :v})`,
		// type hints
		`INSERT INTO t (a,b,c) VALUES ((int) ?, (list<frozen<map<text, int>>>) ?, (vector<float, 3>) [1, 2, 3])`,
		`INSERT INTO t (a) VALUES ((int) null)`,
		`INSERT INTO t (a) VALUES ((double) NaN)`,
		`INSERT INTO t (a) VALUES ((float) Infinity)`,
		`INSERT INTO t (a) VALUES ((int) -1)`,
		`INSERT INTO t (a) VALUES (("MyType") {f: 1})`,
		`INSERT INTO t (a) VALUES ((ks.mytype) {f: 1})`,
		`INSERT INTO t (a) VALUES (('org.apache.cassandra.db.marshal.Int32Type') ?)`,
		`INSERT INTO t (a) VALUES ((frozen<ks.mytype>) ?)`,
		// bind markers
		`SELECT * FROM t WHERE k IN ? LIMIT ?`,
		`SELECT * FROM t WHERE k IN :ks PER PARTITION LIMIT :p LIMIT :l`,
		`SELECT * FROM t WHERE k = :"Key"`,
		`UPDATE t USING TTL :ttl AND TIMESTAMP :ts SET v = :v WHERE k = :k`,
		`INSERT INTO t JSON :json DEFAULT NULL`,
		`INSERT INTO t JSON ? DEFAULT UNSET IF NOT EXISTS USING TTL ?`,
		`INSERT INTO t (k) VALUES (?) USING TIMESTAMP ? AND TTL ?`,
		`INSERT INTO t (k) VALUES (?) IF NOT EXISTS USING TIMESTAMP ?`,
		// functions
		`SELECT ks.fn(a), "ks"."Fn"(a), fn(), now(), toJson(m), fromJson('1'), token(k), count(1), count(*), blobAsText(b), system.now() FROM t`,
		`SELECT CAST(a AS text), cast(writetime(v) AS text), f(g(h(a))) FROM t`,
		`SELECT a + b, a - 1, a * 2, a / 3, a % 2, -a, (a + b) * 2 FROM t`,
		`UPDATE t SET v = 10 % 3 WHERE k = 1`,
		`SELECT * FROM t WHERE k = 5 % 2`,
		`INSERT INTO t (k, v) VALUES (1, toTimestamp(now()) - 1d)`,
		// selectors
		`SELECT DISTINCT k FROM t`,
		`SELECT JSON DISTINCT k, v AS "V" FROM t`,
		`SELECT COUNT(*) AS n, COUNT(1) FROM t`,
		`SELECT WRITETIME(v), TTL(v), MAXWRITETIME(v), WRITETIME(u.f), TTL(m['k']) FROM t`,
		`SELECT m['k'], m['a'..'b'], m[1..3], l[0], u.f, u.f.g, m['k'].f FROM t`,
		`SELECT m[..'b'] FROM t`,
		`SELECT m['a'..] FROM t`,
		`SELECT m[?..?] FROM t`,
		`SELECT (int) a, (text) 'x', [a, b], {a, b}, {a: b}, (a, b) FROM t`,
		`SELECT similarity_cosine(v, [1.0, 2.0]) AS s FROM t`,
		`SELECT ks.fn(a) AS x FROM ks.t`,
		// WHERE
		`SELECT * FROM t WHERE token(a, b) > token(?, ?) AND token(a, b) <= token(1, 2)`,
		`SELECT * FROM t WHERE token(k) > -9223372036854775808`,
		`SELECT * FROM t WHERE k = 1 AND (a, b) IN ((1, 2), (3, 4))`,
		`SELECT * FROM t WHERE k = 1 AND (a, b) IN (?, ?) AND (a, b) > ? AND (a, b) < (1, 2)`,
		`SELECT * FROM t WHERE k = 1 AND (a, b) IN ?`,
		`SELECT * FROM t WHERE k = 1 AND (a, b) IN ()`,
		`SELECT * FROM t WHERE k IN ()`,
		`SELECT * FROM t WHERE s CONTAINS ? AND m CONTAINS KEY ? AND v IS NOT NULL AND n LIKE 'a%' ALLOW FILTERING`,
		`SELECT * FROM t WHERE m['k'] = 1 ALLOW FILTERING`,
		`SELECT * FROM t WHERE (k = 1)`,
		`SELECT * FROM t WHERE k = 1 AND (c > 2)`,
		`SELECT * FROM t WHERE ((a, b) > (1, 2))`,
		`SELECT * FROM t WHERE expr(my_idx, 'query')`,
		`SELECT * FROM t WHERE k = 1 AND expr(ks_idx, ?)`,
		`SELECT * FROM t WHERE k = 1 AND v != 2 ALLOW FILTERING`,
		// IF
		`UPDATE t SET v = 1 WHERE k = 1 IF EXISTS`,
		`UPDATE t SET v = 1 WHERE k = 1 IF v IN (1, 2) AND w IN ? AND v != null AND m['k'] = 1 AND u.f = 1 AND m['k'] IN (1) AND u.f IN ?`,
		`UPDATE t SET v = 1 WHERE k = 1 IF s CONTAINS 1 AND m CONTAINS KEY 'k'`,
		`DELETE FROM t WHERE k = 1 IF v = null`,
		`INSERT INTO t (k) VALUES (1) IF NOT EXISTS`,
		// UPDATE assignments
		`UPDATE t SET c = c + ?, d = ? + d, l = [1] + l, m = m + {'a': 1}, s = s - {'a'}, c += 1, e -= 2, m['k'] = 'v', u.f = 1, l[0] = 1, c = c - 3, c = c -3, u."F" = 2, m[?] = ? WHERE k = 1`,
		`UPDATE t SET l = l - [1], s = s + ?, m = m - ? WHERE k IN (1, 2)`,
		// DELETE
		`DELETE l[0], m['k'], u.f FROM t WHERE k = 1`,
		`DELETE FROM t USING TIMESTAMP ? WHERE k = ?`,
		`DELETE FROM ks.t USING TIMESTAMP 123 WHERE k = 1 AND c > 1 AND c < 3`,
		// SELECT clauses
		`SELECT k, floor(ts, 1h) FROM t WHERE k = 1 GROUP BY k, floor(ts, 1h)`,
		`SELECT * FROM t WHERE k = 1 ORDER BY c ASC, d DESC`,
		`SELECT * FROM t WHERE k = ? PER PARTITION LIMIT ? LIMIT ? ALLOW FILTERING`,
		`SELECT * FROM t ORDER BY v ANN OF [0.1, 0.2] LIMIT 10`,
		`SELECT * FROM t ORDER BY v ANN OF ? LIMIT ?`,
		`SELECT * FROM t ORDER BY v ANN OF [0.1, 0.2] LIMIT 10 WITH ann_options = {'rerank_k': 20}`,
		// batch
		`BEGIN UNLOGGED BATCH USING TIMESTAMP 1 INSERT INTO a (k) VALUES (1); APPLY BATCH;`,
		`BEGIN COUNTER BATCH USING TIMESTAMP ? UPDATE c SET n = n + 1 WHERE k = 1 UPDATE c SET n = n - 1 WHERE k = 2 APPLY BATCH`,
		`BEGIN BATCH APPLY BATCH`,
		`begin batch insert into a (k) values (1) if not exists; update a set v = 1 where k = 1 if v = 2; delete from a where k = 1 if exists; apply batch`,
		// misc
		`-- comment
		SELECT /* inline */ * FROM t // trailing
		WHERE k = 1;`,
		`select * from t where k = 1 limit 1 allow filtering;`,
		`TRUNCATE TABLE ks.t`,
		`TRUNCATE COLUMNFAMILY ks.t`,
		`TRUNCATE "Quoted"`,
		`USE "Quoted"`,
		`USE ks;`,
	} {
		toks, lerr := Lex(s)
		if lerr != nil {
			// The lexer's gaps (% and µ), older than CheckSyntax: lint reports such a
			// file as not CQL.
			t.Logf("not lexed: %s: %v", s, lerr)
			continue
		}
		if err := CheckSyntax(toks); err != nil {
			t.Errorf("REFUSED: %s\n    %v", s, err)
		}
	}
}

// TestCheckSyntaxAcceptsMore logs invalid statements CheckSyntax accepts: it may accept
// more than Cassandra, never less.
func TestCheckSyntaxAcceptsMore(t *testing.T) {
	for _, s := range []string{
		`DELETE FROM t USING TTL 10 WHERE k = 1`,
		`INSERT INTO t (k) VALUES (1) USING TTL 1 IF NOT EXISTS`,
		`SELECT * FROM t LIMIT 1 WHERE k = 1`,
		`SELECT * FROM t WHERE k = 1 IF EXISTS`,
		`UPDATE t SET v = 1 WHERE k = 1 IF NOT EXISTS`,
		`SELECT is, materialized FROM t`,
		`UPDATE t SET c + = 1 WHERE k = 1`,
		`SELECT * FROM t WHERE k = 1 AND token(k) BETWEEN 1 AND 2`,
		`USE ?`,
		`SELECT * FROM t WHERE k = 1 LIMIT 'x'`,
		`INSERT INTO t (k) VALUES (1) USING TTL 'x'`,
		`UPDATE t SET v = 1 WHERE k = 1 IF v IS NOT NULL`,
		`SELECT * FROM t WHERE k = _x`,
	} {
		if err := check(t, s); err == nil {
			t.Logf("accepted (invalid in Cassandra): %s", s)
		}
	}
}

// TestCheckSyntaxValidCQLMore: the reviewer's second round.
func TestCheckSyntaxValidCQLMore(t *testing.T) {
	for _, s := range []string{
		`SELECT * FROM t WHERE k = : k`,
		`SELECT JSON distinct FROM t`,
		`SELECT json + 1 FROM t`,
		`SELECT distinct + 1 FROM t`,
		`SELECT json['k'] FROM t`,
		`DELETE FROM t WHERE k = 1 IF exists = 1`,
		`UPDATE t SET v = 1 WHERE k = 1 IF exists IN (1)`,
		`INSERT INTO t (k) VALUES ((tuple<int, text>) ?)`,
		`SELECT (ks.udt) {f: 1} FROM t`,
		`INSERT INTO t ("") VALUES (1)`,
		`SELECT ks.token(k) FROM t`,
		`SELECT "ks".count(*) FROM t`,
		`UPDATE t SET m = m + {'a': 1} WHERE k = 1 IF m['a'] IN ?`,
		`SELECT * FROM t WHERE k = 1 AND c = 10 % 3`,
		`SELECT (int) token(k) FROM t`,
		`INSERT INTO t (a) VALUES ([:a, :b])`,
		`INSERT INTO t (a) VALUES ({'x': [1], 'y': :b})`,
		`SELECT * FROM t WHERE k = 0xff AND c = -0.5 AND d = 1e10`,
		`SELECT * FROM t WHERE k IN (1, 2) ORDER BY c ANN OF [1, 2] ASC LIMIT 1`,
		`SELECT * FROM t WHERE (k IN (1, 2))`,
		`SELECT a AS b, c AS "D" FROM t`,
		`SELECT count(*) FROM t WHERE k = 1 GROUP BY k`,
		`SELECT * FROM t WHERE k = 1 AND v CONTAINS KEY :k`,
		`INSERT INTO t (a) VALUES (:a) USING TTL 0`,
		`UPDATE t SET v = null WHERE k = 1`,
		`UPDATE t SET v = ?, w = (text) null WHERE k = 1`,
		`SELECT * FROM t WHERE v = 'a' -- comment without newline`,
	} {
		toks, lerr := Lex(s)
		if lerr != nil {
			// The lexer's gaps (% and µ), older than CheckSyntax: lint reports such a
			// file as not CQL.
			t.Logf("not lexed: %s: %v", s, lerr)
			continue
		}
		if err := CheckSyntax(toks); err != nil {
			t.Errorf("REFUSED: %s\n    %v", s, err)
		}
	}
}

// TestCheckSyntaxAcceptsMore2: more of them.
func TestCheckSyntaxAcceptsMore2(t *testing.T) {
	for _, s := range []string{
		`INSERT INTO t (a) VALUES (nul)`,
		`SELECT * FROM t WHERE k = other_col`,
		`INSERT INTO t (a) VALUES (1) USING TTL 1 AND TTL 2 AND TIMESTAMP`,
		`SELECT * FROM t WHERE k = 1 ORDER BY c ANN OF [1] DESC`,
		`SELECT COUNT(*, *) FROM t`,
		`SELECT f(*) FROM t`,
		`BEGIN BATCH SELECT * FROM t APPLY BATCH`,
		`SELECT * FROM t WHERE k = 1 AND c = [1][0]`,
		`INSERT INTO t (a) VALUES (- - 1)`,
	} {
		if err := check(t, s); err == nil {
			t.Logf("accepted (invalid in Cassandra): %s", s)
		} else {
			t.Logf("refused: %s: %v", s, err)
		}
	}
}
