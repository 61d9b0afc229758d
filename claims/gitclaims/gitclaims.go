// Package gitclaims keeps claims in the project's git remote: one ref per
// plan, refs/fleetwatch/leases/<slug>, created by a create-only push and
// renewed, taken over and dropped by compare-and-swap pushes; the lanes are
// read from the fetched integration branch and plans move on it by CAS.
package gitclaims

import (
	"context"
	"errors"
	"time"

	"fleetwatch/claims"
	"fleetwatch/model"
)

func init() {
	claims.Register("git", func(cfg claims.Config) (claims.Backend, error) { return Open(cfg) })
}

// LeaseRefs is the remote namespace of lease refs.
const LeaseRefs = "refs/fleetwatch/leases/"

// Backend is the git claims backend.
type Backend struct {
	cfg   claims.Config
	lanes *Lanes
}

// Open opens the git backend for cfg.Project's remote cfg.Remote.
func Open(cfg claims.Config) (*Backend, error) {
	return nil, errors.New("gitclaims: not built yet")
}

// Lanes reads a project's lanes from its remote integration branch and
// moves plans on it by compare-and-swap pushes; the etcd backend uses it
// for its moves too.
type Lanes struct{ cfg claims.Config }

// NewLanes opens cfg.Project's remote integration branch.
func NewLanes(cfg claims.Config) (*Lanes, error) { return nil, errors.New("gitclaims: not built yet") }

// Read fetches the integration branch and returns its lanes, and the commit
// they were read at.
func (l *Lanes) Read(ctx context.Context) (*model.Snapshot, string, error) {
	return nil, "", errors.New("gitclaims: not built yet")
}

// Move moves rel to lane on the remote integration branch, rebuilt on the
// branch's new tip when it moved, and returns the new rel.
func (l *Lanes) Move(ctx context.Context, rel string, to model.Lane, by string) (string, error) {
	return "", errors.New("gitclaims: not built yet")
}

var _ claims.Backend = (*Backend)(nil)

func (b *Backend) Name() string { return "git" }
func (b *Backend) View(ctx context.Context) (*claims.View, error) {
	return nil, errors.New("not built")
}
func (b *Backend) Claim(ctx context.Context, v *claims.View, rel string, h claims.Holder, ttl time.Duration) (claims.Held, error) {
	return claims.Held{}, errors.New("not built")
}
func (b *Backend) Renew(ctx context.Context, held claims.Held, ttl time.Duration) (claims.Held, error) {
	return claims.Held{}, errors.New("not built")
}
func (b *Backend) TakeOver(ctx context.Context, v *claims.View, slug string, h claims.Holder, ttl time.Duration) (claims.Held, error) {
	return claims.Held{}, errors.New("not built")
}
func (b *Backend) Release(ctx context.Context, held claims.Held, reason string) error {
	return errors.New("not built")
}
func (b *Backend) Complete(ctx context.Context, held claims.Held, to model.Lane) (string, error) {
	return "", errors.New("not built")
}
func (b *Backend) MovePlan(ctx context.Context, rel string, to model.Lane, by string) (string, error) {
	return "", errors.New("not built")
}
func (b *Backend) Close() error { return nil }
