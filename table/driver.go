package table

import (
	"github.com/cqlsafe/cqlsafe/internal/cqlvalue"
)

// driver is gocql v1.7 for core.Table (internal/cqlvalue.Driver, shared with settle).
type driver = cqlvalue.Driver

// protoVersion is the protocol version type infos are stamped with.
const protoVersion = cqlvalue.ProtoVersion

var withProto = cqlvalue.WithProto
