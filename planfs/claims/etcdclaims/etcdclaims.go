//go:build etcd

package etcdclaims

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
)

// opener is the description's Open in a build with the etcd tag.
func opener(cfg claims.Config) (claims.Backend, error) { return Open(cfg) }

const (
	// defaultTimeout bounds each etcd request when Config.Timeout is 0.
	defaultTimeout = 30 * time.Second
	// dialTimeout bounds connecting to an endpoint.
	dialTimeout = 5 * time.Second
)

// Backend is the etcd claims backend.
type Backend struct {
	cli       *clientv3.Client
	endpoints string
	prefix    string // /fleetwatch/<project id>/leases/
	timeout   time.Duration
	// lanes is the project's remote integration branch; nil when the
	// project has no such remote, and then tree (the checkout) is read.
	lanes *gitclaims.Lanes
	tree  *planfs.Tree

	mu      sync.Mutex
	session *session                // the worker session (StartSession), or nil
	spare   *spare                  // a claim-only lease a lost race left unused, or nil
	decoded map[string]decodedLease // slug → its key's lease, by mod revision
	fleet   fleetSeen               // the worker keys as this process saw them (fleet.go)
}

var (
	_ claims.Backend   = (*Backend)(nil)
	_ claims.Watcher   = (*Backend)(nil)
	_ claims.Sessioner = (*Backend)(nil)
)

// Open connects to cfg.Endpoints for cfg.Project, whose project id is
// cfg.ProjectID or else its integration branch's root commit.
func Open(cfg claims.Config) (*Backend, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, fmt.Errorf("etcd: no endpoints; set claims: {backend: etcd, endpoints: [http://HOST:2379]}: %w", claims.ErrUnavailable)
	}
	b := &Backend{endpoints: strings.Join(cfg.Endpoints, ","), timeout: cfg.Timeout, decoded: map[string]decodedLease{}}
	b.fleet.project, _ = filepath.Abs(cfg.Project)
	if b.timeout <= 0 {
		b.timeout = defaultTimeout
	}
	lanes, lerr := gitclaims.NewLanes(cfg)
	if lerr == nil {
		b.lanes = lanes
	} else {
		tree, err := planfs.Open(cfg.Project)
		if err != nil {
			return nil, fmt.Errorf("etcd claims: %v (and no git remote: %v)", err, lerr)
		}
		b.tree = tree
	}
	id := cfg.ProjectID
	if id == "" {
		var err error
		if id, err = b.rootCommit(cfg); err != nil {
			return nil, err
		}
	}
	b.prefix = "/fleetwatch/" + id + "/leases/"
	cli, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: dialTimeout, Logger: zap.NewNop()})
	if err != nil {
		return nil, b.unavailable(err)
	}
	b.cli = cli
	return b, nil
}

// rootCommit is the project id by default: the root commit of the
// integration branch, the same on every machine (the smallest oid when the
// branch has several roots, so every machine picks the same one).
func (b *Backend) rootCommit(cfg claims.Config) (string, error) {
	project, err := filepath.Abs(cfg.Project)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	git := func(args ...string) (string, error) {
		r, err := gitenv.Run(ctx, gitenv.Call{Dir: project, Args: args, Timeout: b.timeout})
		return r.Text(), err
	}
	hint := "set claims: {project: ID} in fleetwatch.yaml, the same on every machine"
	if shallow, _ := git("rev-parse", "--is-shallow-repository"); shallow == "true" {
		return "", fmt.Errorf("etcd project id: %s is a shallow clone, whose root commit differs by machine; %s", project, hint)
	}
	refs := b.rootRefs(cfg)
	for _, ref := range refs {
		if roots, err := git("rev-list", "--max-parents=0", ref, "--"); err == nil && roots != "" {
			return smallest(roots), nil
		}
	}
	if b.lanes != nil {
		// The branch is only on the remote so far: its fetched tip knows.
		if _, tip, err := b.lanes.Read(ctx); err == nil {
			if roots, err := git("rev-list", "--max-parents=0", tip, "--"); err == nil && roots != "" {
				return smallest(roots), nil
			}
		}
	}
	return "", fmt.Errorf("etcd project id: no integration branch with commits in %s (tried %s); %s", project, strings.Join(refs, ", "), hint)
}

// rootRefs are the refs whose root commit names the project, in order:
// the integration branch's, fetched or local, else dev's, develop's, HEAD's.
func (b *Backend) rootRefs(cfg claims.Config) []string {
	remote := cfg.Remote
	if remote == "" {
		remote = "origin"
	}
	switch {
	case b.lanes != nil:
		br := b.lanes.Integration()
		return []string{"refs/remotes/" + remote + "/" + br, "refs/heads/" + br}
	case cfg.Integration != "":
		return []string{"refs/heads/" + cfg.Integration, "refs/remotes/" + remote + "/" + cfg.Integration}
	}
	return []string{"refs/heads/dev", "refs/heads/develop", "HEAD"}
}

func smallest(lines string) string {
	f := strings.Fields(lines)
	sort.Strings(f)
	return f[0]
}

// Name is "etcd".
func (b *Backend) Name() string { return backendName }

// Prefix is the key prefix the leases live under.
func (b *Backend) Prefix() string { return b.prefix }

// Close revokes the worker session's lease, if any (its claims go with
// it), and closes the connection. Claim-only leases outlive it: they live
// on their TTL and heartbeats.
func (b *Backend) Close() error {
	b.mu.Lock()
	s := b.session
	b.session = nil
	sp := b.spare
	b.spare = nil
	b.mu.Unlock()
	if sp != nil {
		b.revoke(sp.id)
	}
	if s != nil {
		s.stop()
		ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
		_, _ = b.cli.Revoke(ctx, s.id)
		cancel()
	}
	return b.cli.Close()
}

func (b *Backend) key(slug string) string { return b.prefix + slug }

// op bounds one request to the backend's timeout.
func (b *Backend) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, b.timeout)
}

// unavailable words a failed talk with etcd: one line naming the endpoints.
func (b *Backend) unavailable(err error) error {
	if errors.Is(err, claims.ErrUnavailable) {
		return err
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Errorf("etcd %s: %s: %w", b.endpoints, msg, claims.ErrUnavailable)
}

// MoveHeld moves held's plan to lane on the integration branch (git), then
// deletes its key, CAS on its version: git and etcd share no transaction,
// so the key is checked first and dropped last. While it stays, no worker
// can claim the plan (a claim is create-only), and once it goes the plan
// is no longer in the lane it left: a parked plan never ends up leased.
func (b *Backend) MoveHeld(ctx context.Context, held claims.Held, to model.Lane, by, why string) (string, error) {
	if b.lanes == nil {
		return "", b.noRemote(held.Rel)
	}
	ver, err := version(held)
	if err != nil {
		return "", err
	}
	gctx, cancel := b.op(ctx)
	g, err := b.cli.Get(gctx, b.key(held.Slug))
	cancel()
	if err != nil {
		return "", b.unavailable(err)
	}
	if len(g.Kvs) == 0 || g.Kvs[0].ModRevision != ver {
		return "", fmt.Errorf("%s: the lease changed or is gone since revision %d: %w", held.Slug, ver, claims.ErrLost)
	}
	dst, err := b.lanes.Move(ctx, held.Rel, to, by, why)
	if err != nil {
		return "", err
	}
	if err := b.remove(ctx, held); err != nil && !errors.Is(err, claims.ErrLost) {
		return dst, fmt.Errorf("%s: moved to %s, but its etcd key stays until its lease expires: %w", held.Slug, dst, err)
	}
	return dst, nil
}
