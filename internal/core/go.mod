module github.com/cqlsafe/cqlsafe/internal/core

go 1.24
