package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// reviewFlags are review's flags: one mode (--approve, --needs-work,
// --defer, --peer) and --peer's options.
type reviewFlags struct {
	root, needsWork, deferNote string
	approve, peer              bool
	peerOpt                    landing.PeerOptions
	changed                    func(name string) bool // whether a flag was given
}

func reviewCmd() *cobra.Command {
	return leaf("review SLUG", "approve, send back, defer or peer-review a change in review-needed/", func(fs *pflag.FlagSet) body {
		f := reviewFlags{changed: fs.Changed}
		o := &f.peerOpt
		rootFlag(fs, &f.root, rootHelp)
		fs.BoolVar(&f.approve, "approve", false, "approve the branch's tip commit (a person, never an agent)")
		fs.StringVar(&f.needsWork, "needs-work", "", "send the plan back to its ready lane with `NOTE` under ## Review notes")
		fs.StringVar(&f.deferNote, "defer", "", "park the plan in blocked/ with `NOTE` under ## Review notes")
		fs.BoolVar(&f.peer, "peer", false, "have another worker review the tip commit in a throwaway worktree, in the foreground")
		fs.StringVar(&o.Endpoint, "endpoint", "", "with --peer: the reviewer's endpoint (default: one of the author's tier or higher)")
		fs.StringVar(&o.AgentID, "agent-id", "", "with --peer: the reviewer's agent id (default review-<endpoint>)")
		fs.StringVar(&o.Registry, "registry", "", "with --peer: the endpoints file (default endpoints.yaml at the root)")
		fs.BoolVar(&o.AllowSelf, "allow-self", false, "with --peer: let the endpoint that wrote the change review it when it is the one chosen (said in the review)")
		fs.DurationVar(&o.Timeout, "timeout", landing.DefaultPeerTimeout, "with --peer: kill the reviewer after this long")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) != 1 {
				return fail(stderr, exitError, "review: want exactly one slug, got %d", len(pos))
			}
			if err := f.check(); err != nil {
				return failErr(stderr, "review", err)
			}
			t, err := planfs.Open(findRoot(f.root))
			if err != nil {
				return failErr(stderr, "review", err)
			}
			said, err := f.review(t, pos[0], stderr)
			if err != nil {
				return failErr(stderr, "", err)
			}
			fmt.Fprintln(stdout, said)
			return exitOK
		}
	})
}

// check refuses flags that do not go together: exactly one mode, and
// --peer's options only with --peer.
func (f *reviewFlags) check() error {
	modes := 0
	for _, set := range []bool{f.approve, f.changed("needs-work"), f.changed("defer"), f.peer} {
		if set {
			modes++
		}
	}
	o := f.peerOpt
	switch {
	case modes != 1:
		return errors.New("give exactly one of --approve, --needs-work NOTE, --defer NOTE or --peer")
	case !f.peer && (o.Endpoint != "" || o.AgentID != "" || o.Registry != "" || o.AllowSelf || f.changed("timeout")):
		return errors.New("--endpoint, --agent-id, --registry, --allow-self and --timeout go with --peer")
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout must be positive, not %v", o.Timeout)
	}
	return nil
}

// review approves, peer-reviews, sends back or defers slug's change, as
// the flags say, and returns the line that says what it did; warnings and
// a peer reviewer's progress go to stderr.
func (f *reviewFlags) review(t *planfs.Tree, slug string, stderr io.Writer) (string, error) {
	me := operatorAgentID()
	switch {
	case f.approve:
		ap, err := landing.Approve(t, slug, me)
		if err != nil {
			return "", fmt.Errorf("review %s: %w", slug, err)
		}
		return fmt.Sprintf("approved %s at %.7s (by %s)", model.FeatureBranch(slug), ap.Commit, cell(ap.By)), nil
	case f.peer:
		return f.peerReview(t, slug, stderr)
	}
	note, send := f.needsWork, t.SendBack
	if f.changed("defer") {
		note, send = f.deferNote, t.Defer
	}
	dst, err := send(string(model.RelOf(model.ReviewNeeded, slug+".md")), note, planfs.Agent(me))
	if err != nil {
		return "", fmt.Errorf("review: %w", err)
	}
	if err := landing.RemoveAs(t, slug, me); err != nil && !errors.Is(err, landing.ErrNotQueued) {
		say(stderr, "warning: %s left review-needed/ but is still queued: %v", slug, err)
	}
	if w := landing.NoteOnForge(t, slug, note, !f.changed("defer")); w != "" {
		say(stderr, "warning: %s", w)
	}
	return fmt.Sprintf("sent back to %s: %s", dst, cell(note)), nil
}

// peerReview has another worker review slug's tip commit in the
// foreground, until it answers, the timeout or a stop signal.
func (f *reviewFlags) peerReview(t *planfs.Tree, slug string, stderr io.Writer) (string, error) {
	opt := f.peerOpt
	if opt.Registry != "" {
		opt.Registry, _ = filepath.Abs(opt.Registry)
	}
	opt.Log = progress{stderr}
	ctx, stop := stopContext()
	defer stop()
	r, err := landing.Peer(ctx, t, slug, opt)
	if err != nil {
		return "", fmt.Errorf("review %s: %w", slug, err)
	}
	rel, _ := filepath.Rel(t.Project, r.Path)
	if r.Self {
		return fmt.Sprintf("self-review by %s, of the endpoint %s that wrote it (--allow-self): %s (%s)", cell(r.Reviewer), cell(r.Endpoint), cell(string(r.Verdict)), cell(rel)), nil
	}
	return fmt.Sprintf("peer review by %s: %s (%s)", cell(r.Reviewer), cell(string(r.Verdict)), cell(rel)), nil
}
