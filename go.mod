module github.com/cqlsafe/cqlsafe

go 1.24
