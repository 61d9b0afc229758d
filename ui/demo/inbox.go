package demo

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/coord"
)

// The coordinator's inbox: a plan-first plan whose agent wrote its
// implementation plan and stopped, waiting for approval.

const (
	proposalSlug  = "share-links"
	proposalAgent = "reasoner-2"
)

// proposal is reasoner-2's plan turn on share-links, as the driver runs
// one: the plan claimed, proposal 1 written with its Files in scope, the
// driver's authorship record beside it, and the lease handed to the inbox.
func (b *builder) proposal() {
	b.add(model.Features, proposalSlug, 50*time.Minute)
	if b.err != nil {
		return
	}
	b.at(40 * time.Minute)
	held, err := b.tree.ClaimHeld("features/"+proposalSlug+".md", proposalAgent, planfs.DefaultTTL)
	if err != nil {
		b.fail("claim "+proposalSlug, err)
		return
	}
	path, n, err := coord.NextProposal(b.project, proposalSlug)
	if err == nil {
		err = copySample(b.project, path)
	}
	var rec coord.Record
	if err == nil {
		rec, err = coord.RecordProposal(b.project, coord.Record{Slug: proposalSlug, N: n, Plan: held.Rel,
			AgentID: proposalAgent, RunID: "demo-run-" + strconv.Itoa(n)})
	}
	if err == nil {
		err = b.backdateRecord(rec, 35*time.Minute)
	}
	if err != nil {
		b.fail("proposal for "+proposalSlug, err)
		return
	}
	b.at(35 * time.Minute)
	b.fail("hand "+proposalSlug+" to the inbox", b.tree.AwaitApproval(held.Rel, planfs.Actor{AgentID: proposalAgent, Token: held.Token}))
}

// backdateRecord sets the record's time to ago before the demo's now: the
// driver stamps it with the machine's clock, and the demo's times are all
// fixed by now. The sha256 is the proposal's, so it still holds.
func (b *builder) backdateRecord(rec coord.Record, ago time.Duration) error {
	rec.At = b.now.Add(-ago).UTC()
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(coord.ProposalDir(b.project, rec.Slug), strconv.Itoa(rec.N)+".json"), append(data, '\n'), 0o644)
}
