package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"fleetwatch/claims"
	"fleetwatch/model"
	"fleetwatch/workers"
)

// remoteKeeper is a driver's lease held in a remote claims backend: the
// heartbeat renews it by compare-and-swap, and each heartbeat (and the
// end of the run) pushes the plan's feature branch, so the next owner on
// another machine gets every commit.
type remoteKeeper struct {
	b      claims.Backend
	held   claims.Held
	ttl    time.Duration
	every  time.Duration // the driver's renewal interval, TTL/3
	remote string        // where feature/<slug> is pushed
	repo   string        // the project whose branch is pushed
	log    *workers.Log
}

var _ workers.Keeper = (*remoteKeeper)(nil)

func (r *remote) keeper(held claims.Held, log *workers.Log) *remoteKeeper {
	return &remoteKeeper{b: r.b, held: held, ttl: r.ttl, every: r.ttl / 3, remote: r.remote, repo: r.t.Project, log: log}
}

// deadline is when the holder must stop: TTL minus one heartbeat interval
// after its last successful renewal began, on the monotonic clock, so it
// stops before any observer may take the plan over.
func (k *remoteKeeper) deadline() time.Time { return k.held.Renewed.Add(k.ttl - k.every) }

func (k *remoteKeeper) Holds() bool { return time.Now().Before(k.deadline()) }

func (k *remoteKeeper) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), max(k.every, 30*time.Second))
}

func (k *remoteKeeper) Renew() (string, error) {
	if !k.Holds() {
		return fmt.Sprintf("not renewed for %s (the lease's %s less one heartbeat): another machine may take it over", time.Since(k.held.Renewed).Round(time.Second), k.ttl), nil
	}
	ctx, cancel := k.ctx()
	defer cancel()
	held, err := k.b.Renew(ctx, k.held, k.ttl)
	switch {
	case errors.Is(err, claims.ErrLost), errors.Is(err, claims.ErrNoLease), errors.Is(err, claims.ErrNotHolder):
		return "renewal rejected: " + err.Error(), nil
	case err != nil:
		return "", err
	}
	k.held = held
	k.push()
	return "", nil
}

func (k *remoteKeeper) Complete(to model.Lane) (string, error) {
	k.push()
	ctx, cancel := k.ctx()
	defer cancel()
	return k.b.Complete(ctx, k.held, to)
}

func (k *remoteKeeper) Release(reason string) (string, error) {
	k.push()
	ctx, cancel := k.ctx()
	defer cancel()
	if err := k.b.Release(ctx, k.held, reason); err != nil {
		return "", err
	}
	return k.held.Rel, nil
}

// push sends feature/<slug> to the remote with a plain push: a rejected
// one (someone pushed there since) is logged, never fatal.
func (k *remoteKeeper) push() {
	branch := workers.FeatureBranch(k.held.Slug)
	ref := "refs/heads/" + branch
	if _, err := gitRun(k.repo, "rev-parse", "--verify", "--quiet", ref); err != nil {
		return // no branch made yet: nothing to push
	}
	if _, err := gitRun(k.repo, "push", "--quiet", "--no-verify", k.remote, ref+":"+ref); err != nil {
		if k.log != nil {
			k.log.Printf("push of %s to %s failed: %v", branch, k.remote, err)
		}
		return
	}
	if k.log != nil {
		k.log.Printf("pushed %s to %s", branch, k.remote)
	}
}
