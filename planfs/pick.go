package planfs

import (
	"errors"

	"github.com/fleetwatch/fleetwatch/model"
)

// maxClaimTries bounds how many candidates one bare pick tries after losing
// races, as anchor does.
const maxClaimTries = 32

// ClaimNext claims the first plan a bare pick gives w from snap, moving on to
// the next candidate when another worker wins one. Rels it tried are added to
// skip, so a caller claiming several plans can reuse one snapshot. It returns
// a zero Claimed and no error when nothing is left to take.
func (t *Tree) ClaimNext(snap *model.Snapshot, w model.Worker, opt model.Options, ttl float64, skip map[string]bool) (Claimed, error) {
	if err := t.Writable(); err != nil {
		return Claimed{}, err
	}
	rows := model.Decide(snap, w, opt)
	tries := 0
	for _, r := range model.Picks(rows, skip) {
		if tries == maxClaimTries {
			break
		}
		tries++
		rel := r.Plan.Rel
		skip[rel] = true
		c, err := t.ClaimHeld(rel, w.AgentID, ttl)
		if err == nil {
			return c, nil
		}
		if errors.Is(err, ErrClaimed) || errors.Is(err, ErrDestExists) || errors.Is(err, ErrNotFound) {
			continue
		}
		return c, err
	}
	return Claimed{}, nil
}
