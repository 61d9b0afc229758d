package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"fleetwatch/landing"
	"fleetwatch/model"
	"fleetwatch/planfs"
)

func reviewCmd() *cobra.Command {
	return leaf("review SLUG", "approve, send back, defer or peer-review a change in review-needed/", func(fs *pflag.FlagSet) body {
		var (
			root, needsWork, deferNote, endpoint, agentID, reg string
			approve, peer                                      bool
			timeout                                            time.Duration
		)
		rootFlag(fs, &root, rootHelp)
		fs.BoolVar(&approve, "approve", false, "approve the branch's tip commit (a person, never an agent)")
		fs.StringVar(&needsWork, "needs-work", "", "send the plan back to its ready lane with `NOTE` under ## Review notes")
		fs.StringVar(&deferNote, "defer", "", "park the plan in blocked/ with `NOTE` under ## Review notes")
		fs.BoolVar(&peer, "peer", false, "have another worker review the tip commit in a throwaway worktree, in the foreground")
		fs.StringVar(&endpoint, "endpoint", "", "with --peer: the reviewer's endpoint (default: one of the author's tier or higher)")
		fs.StringVar(&agentID, "agent-id", "", "with --peer: the reviewer's agent id (default review-<endpoint>)")
		fs.StringVar(&reg, "registry", "", "with --peer: the endpoints file (default endpoints.yaml at the root)")
		fs.DurationVar(&timeout, "timeout", landing.DefaultPeerTimeout, "with --peer: kill the reviewer after this long")
		return func(pos []string, stdout, stderr io.Writer) int {
			const name = "review"
			if len(pos) != 1 {
				return fail(stderr, exitError, "%s: want exactly one slug, got %d", name, len(pos))
			}
			slug := pos[0]
			modes := 0
			for _, set := range []bool{approve, fs.Changed("needs-work"), fs.Changed("defer"), peer} {
				if set {
					modes++
				}
			}
			if modes != 1 {
				return fail(stderr, exitError, "%s: give exactly one of --approve, --needs-work NOTE, --defer NOTE or --peer", name)
			}
			if !peer && (endpoint != "" || agentID != "" || reg != "" || fs.Changed("timeout")) {
				return fail(stderr, exitError, "%s: --endpoint, --agent-id, --registry and --timeout go with --peer", name)
			}
			if timeout <= 0 {
				return fail(stderr, exitError, "%s: --timeout must be positive, not %v", name, timeout)
			}
			t, err := planfs.Open(findRoot(root))
			if err != nil {
				return fail(stderr, exitError, "%s: %v", name, err)
			}
			me := operatorAgentID()
			switch {
			case approve:
				ap, err := landing.Approve(t, slug, me)
				if err != nil {
					return fail(stderr, exitError, "%s %s: %v", name, slug, err)
				}
				fmt.Fprintf(stdout, "approved %s at %.7s (by %s)\n", model.FeatureBranch(slug), ap.Commit, cell(ap.By))
			case peer:
				if reg != "" {
					reg, _ = filepath.Abs(reg)
				}
				ctx, stop := stopContext()
				defer stop()
				r, err := landing.Peer(ctx, t, slug, landing.PeerOptions{Endpoint: endpoint, AgentID: agentID, Registry: reg, Log: progress{stderr}, Timeout: timeout})
				if err != nil {
					return fail(stderr, exitError, "%s %s: %v", name, slug, err)
				}
				rel, _ := filepath.Rel(t.Project, r.Path)
				fmt.Fprintf(stdout, "peer review by %s: %s (%s)\n", cell(r.Reviewer), cell(string(r.Verdict)), cell(rel))
			default:
				note, send := needsWork, t.SendBack
				if fs.Changed("defer") {
					note, send = deferNote, t.Defer
				}
				rel := string(model.RelOf(model.ReviewNeeded, slug+".md"))
				dst, err := send(rel, note, planfs.Agent(me))
				if err != nil {
					return fail(stderr, exitError, "%s: %v", name, err)
				}
				if err := landing.RemoveAs(t, slug, me); err != nil && !errors.Is(err, landing.ErrNotQueued) {
					say(stderr, "warning: %s left review-needed/ but is still queued: %v", slug, err)
				}
				fmt.Fprintf(stdout, "sent back to %s: %s\n", dst, cell(note))
			}
			return exitOK
		}
	})
}
