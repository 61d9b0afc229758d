package workers

import (
	"fmt"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// Keeper is where a driver's lease lives when it is not the tree's lease
// file: a remote claims backend (the git remote's lease ref, an etcd key).
// The driver renews, checks, completes and releases its lease through it;
// a Driver without one keeps the lease file, as it always has.
type Keeper interface {
	// Renew is the heartbeat. lost, when not "", says why the lease is gone
	// for good (a rejected renewal, or too long since the last good one)
	// and the agent must stop; err is a failure worth retrying.
	Renew() (lost string, err error)
	// Holds reports, without asking the backend, whether the lease may
	// still be held: false once its TTL minus one heartbeat has passed since
	// the last successful renewal began, whatever any wall clock says.
	Holds() bool
	// Complete hands the plan on to lane and drops the lease; it returns
	// the plan's new rel.
	Complete(to model.Lane) (string, error)
	// Park moves the plan to a parking lane, saying why, and drops the
	// lease in the same step; it returns the plan's new rel.
	Park(to model.Lane, why string) (string, error)
	// Release gives the plan back, saying why; it returns the plan's rel.
	Release(reason string) (string, error)
}

// keeperBeat is heartbeat through d.Keeper.
func (d *Driver) keeperBeat(rel string) (lost string, keep bool) {
	lost, err := d.Keeper.Renew()
	switch {
	case lost != "":
		return fmt.Sprintf("%s: %s", rel, lost), false
	case err != nil:
		d.Log.Printf("heartbeat failed, will retry: %v", err)
		return "", true
	}
	d.Log.Printf("heartbeat: lease on %s renewed", rel)
	return "", true
}

// completePlan moves the finished plan to lane, through the keeper when the
// lease is remote.
func (d *Driver) completePlan(rel string, to model.Lane, me planfs.Actor) (string, error) {
	if d.Keeper != nil {
		return d.Keeper.Complete(to)
	}
	return d.Tree.Complete(rel, to, me)
}

// releasePlan gives rel back, through the keeper when the lease is remote.
func (d *Driver) releasePlan(rel string, me planfs.Actor, reason string) (string, error) {
	if d.Keeper != nil {
		return d.Keeper.Release(reason)
	}
	return d.Tree.Release(rel, me.Because(reason))
}
