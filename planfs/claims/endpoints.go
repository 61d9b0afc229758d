package claims

import "context"

// EndpointBoard is a remote backend that also carries each endpoint's
// trouble (a rate limit's backoff, a refused key, a spent usage window),
// so no worker on any machine calls an endpoint another machine found
// shut. A record is a small JSON document the workers package writes and
// reads (look.EndpointState); the backend only keeps it.
type EndpointBoard interface {
	// PublishEndpoint writes name's record, replacing what is there; nil
	// data removes it.
	PublishEndpoint(ctx context.Context, name string, data []byte) error
	// EndpointRecord reads name's record, nil when there is none.
	EndpointRecord(ctx context.Context, name string) ([]byte, error)
}

// MaxEndpointRecord bounds an endpoint's record: a few fields.
const MaxEndpointRecord = 4 << 10
