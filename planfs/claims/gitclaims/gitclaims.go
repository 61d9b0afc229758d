// Package gitclaims keeps claims in the project's git remote: one ref per
// plan, refs/fleetwatch/leases/<slug>, created by a create-only push and
// renewed, taken over and dropped by compare-and-swap pushes; the lanes are
// read from the fetched integration branch and plans move on it by CAS.
package gitclaims

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// LeaseRefs is the remote namespace of lease refs; it holds nothing else.
const LeaseRefs = "refs/fleetwatch/leases/"

// defaultTimeout bounds each git command that talks to the remote.
const defaultTimeout = 30 * time.Second

// Lanes reads a project's lanes from its remote integration branch and
// moves plans on it by compare-and-swap pushes; the etcd backend uses it
// for its moves too.
type Lanes struct {
	git         runner
	project     string
	remote      string
	integration string
	// prefix is the project's folder inside its repository ("" at the top).
	prefix string
	// ns is the local namespace fetched refs land in.
	ns string

	objects *objectStore // nil: objects are written by git hash-object

	mu    sync.Mutex
	blobs map[string][]byte // plan blob oid → content, across reads
	// lanes is the last tip read and its plans: a claim moves no plan, so
	// racing claims read the same tip again and again.
	lanesTip string
	lanes    *model.Snapshot
	// judged is the last lanes judged against this machine's record of
	// the branch (notes.go): in, at tip, became out, with the record at
	// stamp.
	judgedTip, judgedStamp string
	judgedIn, judgedOut    *model.Snapshot
}

// NewLanes opens cfg.Project's remote integration branch.
func NewLanes(cfg claims.Config) (*Lanes, error) {
	project, err := filepath.Abs(cfg.Project)
	if err != nil {
		return nil, err
	}
	l := &Lanes{project: project, remote: cfg.Remote, integration: cfg.Integration, blobs: map[string][]byte{}}
	if l.remote == "" {
		l.remote = defaultRemote
	}
	l.git = runner{dir: project, timeout: cfg.Timeout}
	if l.git.timeout <= 0 {
		l.git.timeout = defaultTimeout
	}
	ctx := context.Background()
	if l.prefix, err = l.git.line(ctx, "rev-parse", "--show-prefix"); err != nil {
		return nil, fmt.Errorf("%s is not a git checkout: %w", project, claims.ErrUnavailable)
	}
	if _, err := l.git.line(ctx, "remote", "get-url", l.remote); err != nil {
		return nil, fmt.Errorf("git remote %q: no such remote in %s (claims: {remote: …} in fleetwatch.yaml): %w", l.remote, project, claims.ErrUnavailable)
	}
	l.ns = "refs/fleetwatch/remote/" + l.remote + "/"
	if l.objects, err = l.git.openObjects(ctx); err != nil {
		return nil, fmt.Errorf("%s: cannot find the object store: %v", project, err)
	}
	if l.integration == "" {
		if l.integration, err = l.resolveIntegration(ctx); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// resolveIntegration asks the remote for dev, develop and its HEAD in one
// round trip: the first of dev and develop it has, else its HEAD branch.
func (l *Lanes) resolveIntegration(ctx context.Context) (string, error) {
	out, err := l.git.run(ctx, nil, nil, "ls-remote", "--symref", l.remote, "HEAD", "refs/heads/dev", "refs/heads/develop")
	if err != nil {
		return "", l.unavailable(err)
	}
	has, head := map[string]bool{}, ""
	for _, line := range strings.Split(string(out), "\n") {
		if ref, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			head, _, _ = strings.Cut(ref, "\t")
			continue
		}
		if _, ref, ok := strings.Cut(line, "\t"); ok {
			has[ref] = true
		}
	}
	for _, n := range []string{"dev", "develop"} {
		if has["refs/heads/"+n] {
			return n, nil
		}
	}
	if head == "" {
		return "", fmt.Errorf("remote %s has no dev, develop or HEAD branch; name one with integration: in fleetwatch.yaml: %w", l.remote, claims.ErrUnavailable)
	}
	return head, nil
}

// unavailable words a failed talk with the remote: one line naming it.
func (l *Lanes) unavailable(err error) error {
	return fmt.Errorf("remote %s: %s: %w", l.remote, strings.TrimPrefix(err.Error(), "git "), claims.ErrUnavailable)
}

// Integration is the branch the lanes are read from.
func (l *Lanes) Integration() string { return l.integration }

// Remote is the git remote the lanes and leases live on.
func (l *Lanes) Remote() string { return l.remote }

// Backend is the git claims backend.
type Backend struct {
	*Lanes
	mu     sync.Mutex
	leases map[string]model.Lease // lease commit oid → its lease, across reads
	fleet  fleetState             // the worker refs (fleet.go)
}

var _ claims.Backend = (*Backend)(nil)

// Open opens the git backend for cfg.Project's remote cfg.Remote.
func Open(cfg claims.Config) (*Backend, error) {
	l, err := NewLanes(cfg)
	if err != nil {
		return nil, err
	}
	return &Backend{Lanes: l, leases: map[string]model.Lease{}}, nil
}

// Name is "git".
func (b *Backend) Name() string { return backendName }

// Close has nothing to end: every git command has exited.
func (b *Backend) Close() error { return nil }

func leaseRef(slug string) string { return LeaseRefs + slug }
