package gitclaims

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// EndpointRefs is the remote namespace of endpoint records: one ref per
// endpoint in trouble, refs/fleetwatch/endpoints/<name>, pointing at its
// JSON blob (no commit: a record replaces the last, with no history).
const EndpointRefs = "refs/fleetwatch/endpoints/"

var _ claims.EndpointBoard = (*Backend)(nil)

// EndpointRef is name's ref, escaped as a worker's name is.
func EndpointRef(name string) string { return EndpointRefs + refPart(name) }

// PublishEndpoint pushes data as name's blob by compare-and-swap on what
// the remote holds, read first; nil data deletes the ref.
func (b *Backend) PublishEndpoint(ctx context.Context, name string, data []byte) error {
	if len(data) > claims.MaxEndpointRecord {
		return fmt.Errorf("endpoint record %s: larger than %d bytes", name, claims.MaxEndpointRecord)
	}
	ref, oid := EndpointRef(name), ""
	if data != nil {
		var err error
		if oid, err = b.writeObject(ctx, "blob", data); err != nil {
			return err
		}
	}
	wait := 150 * time.Millisecond
	for try := 0; try < 4; try++ {
		old, err := b.endpointOid(ctx, ref)
		if err != nil || old == oid {
			return err
		}
		res, err := b.push(ctx, []update{{Ref: ref, Old: old, New: oid}})
		if err != nil {
			return err
		}
		switch o := res[ref]; {
		case o.ok:
			return nil
		case namespaceRefused(o.reason):
			return fmt.Errorf("remote %s refuses %s: %s: %w", b.remote, ref, o.reason, claims.ErrUnavailable)
		}
		time.Sleep(wait) // moved under this push, or its lock held: read again
		wait *= 2
	}
	return fmt.Errorf("%s: the ref kept moving under this worker's pushes: %w", ref, claims.ErrLost)
}

// EndpointRecord fetches name's blob, nil when the remote has none.
func (b *Backend) EndpointRecord(ctx context.Context, name string) ([]byte, error) {
	ref := EndpointRef(name)
	oid, err := b.endpointOid(ctx, ref)
	if err != nil || oid == "" {
		return nil, err
	}
	local := b.ns + "endpoints/" + refPart(name)
	if _, err := b.git.run(ctx, nil, nil, "fetch", "--no-tags", "--no-write-fetch-head", "--quiet", b.remote, "+"+ref+":"+local); err != nil {
		return nil, b.unavailable(err)
	}
	size, err := b.git.line(ctx, "cat-file", "-s", oid)
	if n, perr := strconv.Atoi(size); err != nil || perr != nil || n > claims.MaxEndpointRecord {
		return nil, fmt.Errorf("endpoint record %s: not a record of at most %d bytes", ref, claims.MaxEndpointRecord)
	}
	return b.git.run(ctx, nil, nil, "cat-file", "blob", oid)
}

// endpointOid is what the remote's ref holds now, "" when there is none.
func (b *Backend) endpointOid(ctx context.Context, ref string) (string, error) {
	out, err := b.git.run(ctx, nil, nil, "ls-remote", b.remote, ref)
	if err != nil {
		return "", b.unavailable(err)
	}
	oid, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	return oid, nil
}
