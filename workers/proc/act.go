package proc

import (
	"context"
	"fmt"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// Act is claims.Act as an operator's face makes it. A recover over the
// lease files first stops what the holder's driver left running on this
// host, as Recover does: the plan's new holder must not share its branch
// with a leftover agent, and planfs, below the workers, cannot stop one.
func Act(ctx context.Context, b claims.Backend, v *claims.View, op claims.Op) (claims.Result, error) {
	if l, ok := b.(*claims.Local); ok && op.Verb == model.Recover {
		if err := stopHolder(l, v.PlanRel(op.Slug), op.Holder.AgentID); err != nil {
			return claims.Result{}, err
		}
	}
	return claims.Act(ctx, b, v, op)
}

// stopHolder stops what the driver of the lease on rel left running on
// this host, unless the lease is by's own.
func stopHolder(l *claims.Local, rel, by string) error {
	if rel == "" {
		return nil
	}
	ls := l.Tree.ReadLease(rel)
	if ls == nil || ls.AgentID == "" || ls.AgentID == by {
		return nil
	}
	if _, err := StopLeftovers(l.Tree.Project, ls.AgentID); err != nil {
		return fmt.Errorf("cannot stop what %s's driver left running: %v", ls.AgentID, err)
	}
	return nil
}
