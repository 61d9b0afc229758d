package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/planfs/claims/gitclaims"
)

// remoteProblems is what check finds in a project whose claims are remote,
// from one view of its backend: plans no claim there can take (a slug git
// refuses in a lease ref, a plan a backward move of the integration branch
// reopened), the move itself, and the lease refs claims on this machine
// found locked. With accept, the last backward move is forgotten first
// (what was accepted goes to out). Nothing when claims are the lease files.
func remoteProblems(project string, accept bool, out io.Writer) []model.Warning {
	name, _, err := claimsBackend(project, "")
	if err != nil {
		return []model.Warning{{File: "fleetwatch.yaml", Message: err.Error()}}
	}
	if name == "local" {
		return nil
	}
	where := "claims " + name
	b, err := openClaims(project, "")
	if err != nil {
		return []model.Warning{{File: where, Message: err.Error()}}
	}
	defer b.Close()
	var problems []model.Warning
	g, isGit := b.(*gitclaims.Backend)
	if isGit && accept {
		rw, err := g.AcceptRewind()
		switch {
		case err != nil:
			problems = append(problems, model.Warning{File: where, Message: "--accept-rewind: " + err.Error()})
		case rw != nil:
			fmt.Fprintf(out, "accepted the move of %s back from %s to %s; may be claimed again: %v\n", g.Integration(), rw.From, rw.To, rw.Reopened)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := b.View(ctx)
	if err != nil {
		return append(problems, model.Warning{File: where, Message: "cannot read: " + err.Error()})
	}
	problems = append(problems, viewProblems(v)...)
	if isGit {
		if rw, err := g.LastRewind(); err == nil && rw != nil {
			problems = append(problems, model.Warning{File: g.Remote() + "/" + g.Integration(), Message: gitclaims.RewindNotice(rw)})
		}
		problems = append(problems, lockedProblems(g)...)
	}
	return problems
}

// viewProblems are the plans of v no claim through its backend can take,
// and why.
func viewProblems(v *claims.View) []model.Warning {
	var out []model.Warning
	s := v.Snapshot
	for _, p := range s.Plans {
		if p.Lane == model.Completed {
			continue
		}
		if why := model.LeaseRefProblem(p.Slug); s.RefNamed && why != "" {
			out = append(out, model.Warning{File: p.Rel, Message: "never claimed over git claims: " + why})
		}
		if why := s.Refused[p.Slug]; why != "" {
			out = append(out, model.Warning{File: p.Rel, Message: "not claimed: " + why})
		}
	}
	return out
}

// lockedProblems are the lease refs claims on this machine found locked on
// the remote and have not written since.
func lockedProblems(g *gitclaims.Backend) []model.Warning {
	locked, err := g.Locked()
	if err != nil {
		return []model.Warning{{File: "var/fleet/claims", Message: "cannot read the record of locked lease refs: " + err.Error()}}
	}
	slugs := make([]string, 0, len(locked))
	for s := range locked {
		slugs = append(slugs, s)
	}
	sort.Strings(slugs)
	var out []model.Warning
	for _, s := range slugs {
		l := locked[s]
		out = append(out, model.Warning{File: g.Remote() + ":" + gitclaims.LeaseRefs + s,
			Message: fmt.Sprintf("locked on the remote when a claim met it at %s (%s): a leftover %s.lock? remove it there if no push is running; the plan is skipped until then",
				l.At.UTC().Format(time.RFC3339), l.Detail, gitclaims.LeaseRefs+s)})
	}
	return out
}
