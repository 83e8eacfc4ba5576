// Command cqlsafevet is cqlsafe's analyzer as a vet tool:
//
//	go install github.com/cqlsafe/cqlsafe/cmd/cqlsafe/cmd/cqlsafevet
//	go vet -vettool=$(which cqlsafevet) ./...
//	go vet -vettool=$(which cqlsafevet) -schema=schema.cql ./...
//
// Run on its own (cqlsafevet [-schema FILE.cql] [-json] [-fix] packages) it loads the
// packages itself.
package main

import (
	"golang.org/x/tools/go/analysis/singlechecker"

	"github.com/cqlsafe/cqlsafe/cmd/cqlsafe/vet"
)

func main() { singlechecker.Main(vet.Analyzer) }
