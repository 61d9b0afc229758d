package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/serve"
	"github.com/fleetwatch/fleetwatch/workers/notify"
)

const notifyLong = `Notices (a plan waiting for review, a proposal for approval, a run paused at
its budget, a worker failed, stale or dead, a scope violation, a refused landing,
the integration branch moved outside the queue, a plan stuck) go beyond the
cockpit to notify: targets in fleetwatch.yaml or ~/.config/fleetwatch/config.yaml:
webhooks, the terminal's own notification, notify-send. Each notice goes once to
each target, whichever cockpit or watcher sends it. 'fleetwatch help notify'.`

func notifyCmd() *cobra.Command {
	cmd := group("notify", "send notices to webhooks, the terminal, the desktop; test the targets", notifyLong, true,
		notifyTestCmd(), notifyWatchCmd(), notifyLogCmd())
	cmd.Example = "  fleetwatch notify test\n  fleetwatch notify watch\n  fleetwatch notify log"
	return cmd
}

// closeWait bounds how long a face waits on its way out for the notices
// it offered to go.
const closeWait = 5 * time.Second

// newNotifier is the project's notifier, its settings and whether it has
// any target. term is the terminal the terminal target writes to (nil: none);
// remote, when not nil, is where webhooks' notices are claimed across
// machines.
func newNotifier(project string, term io.Writer, log io.Writer, remote *claims.Opened) (*notify.Notifier, config.Notify, error) {
	c, err := config.LoadNotify(project)
	if err != nil {
		return nil, c, err
	}
	opt := notify.Options{Term: term, Tmux: os.Getenv("TMUX") != "", Log: log, Ledger: ledgerOf(remote)}
	following(&opt, project, remote, c)
	return notify.New(project, c, opt), c, nil
}

// following has a started notifier follow project's settings as they
// change, and send only what is still true when its turn comes.
func following(opt *notify.Options, project string, remote *claims.Opened, c config.Notify) {
	opt.Settings = func() (config.Notify, error) { return config.LoadNotify(project) }
	t, err := planfs.Open(project)
	if err != nil {
		return
	}
	var backend claims.Backend
	if remote != nil {
		backend = remote.Backend
	}
	opt.Current = notify.Current(t, backend, stuckAfter(c))
}

// ledgerOf is remote's notice ledger: git and etcd keep one, the lease
// files (one machine) need none.
func ledgerOf(remote *claims.Opened) claims.NoticeLedger {
	if remote == nil {
		return nil
	}
	l, _ := remote.Backend.(claims.NoticeLedger)
	return l
}

// cockpitNotifier is the cockpit's notifier, started: the notices go out
// as the cockpit sees them, their failures kept in the record (notify log)
// and not put on the screen. The demo's sample project sends nothing.
func cockpitNotifier(project string, demo bool, remote *claims.Opened) (*notify.Notifier, time.Duration, error) {
	if demo {
		return nil, config.DefaultStuckAfter, nil
	}
	n, c, err := newNotifier(project, os.Stdout, io.Discard, remote)
	if err != nil {
		return nil, 0, err
	}
	n.Start()
	return n, stuckAfter(c), nil
}

// sendNotices runs what notify watch runs, in the background, when
// project has notify: targets: a served project's notices reach a person
// whether or not a session is open, and its terminal notifications the
// sessions showing it (terms). stop ends it, sending what was under way;
// stuck is the project's stuck_after, for the sessions' headers.
func sendNotices(project string, remote *claims.Opened, terms *serve.Terminals, stderr io.Writer) (stop func(), stuck time.Duration, err error) {
	t, err := planfs.Open(project)
	if err != nil {
		return nil, 0, err
	}
	c, err := config.LoadNotify(project)
	if err != nil {
		return nil, 0, err
	}
	// Each session says whether it runs in tmux; the server's own
	// environment says nothing of its clients.
	var term io.Writer
	if terms != nil {
		term = terms.For(t.Project)
	}
	if len(c.Targets()) == 0 {
		return func() {}, stuckAfter(c), nil
	}
	nopt := notify.Options{Term: term, Log: stderr, Ledger: ledgerOf(remote)}
	following(&nopt, project, remote, c)
	n := notify.New(project, c, nopt)
	opt := watchOptions(c, remote, defaultEvery)
	n.Start()
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); notify.Watch(ctx, t, n, opt) }()
	return func() { cancel(); <-watched; n.Close(closeWait) }, stuckAfter(c), nil
}

// defaultEvery is how often a watcher looks with no change: a worker
// going stale, or a plan getting stuck, changes no file.
const defaultEvery = 30 * time.Second

// watchOptions are a headless sender's: the settings' stuck_after, the
// remote backend's leases when there is one.
func watchOptions(c config.Notify, remote *claims.Opened, every time.Duration) notify.WatchOptions {
	opt := notify.WatchOptions{Every: every, StuckAfter: stuckAfter(c), Debounce: 200 * time.Millisecond}
	if remote != nil {
		opt.Backend = remote.Backend
	}
	return opt
}

// stuckAfter is `notify: {stuck_after:}`, or its default.
func stuckAfter(c config.Notify) time.Duration {
	if c.StuckAfter > 0 {
		return c.StuckAfter
	}
	return config.DefaultStuckAfter
}

// terminalOf is w when it is a terminal: where the terminal target writes.
func terminalOf(w io.Writer) io.Writer {
	if isTerminal(w) {
		return w
	}
	return nil
}

func notifyTestCmd() *cobra.Command {
	cmd := leaf("test", "send one test notice to each target, or to --to's, and say how each went", func(fs *pflag.FlagSet) body {
		var root, to string
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&to, "to", "", "only this target: a webhook's name, terminal or desktop")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "notify test: unexpected argument %q", pos[0])
			}
			n, c, err := newNotifier(findRoot(root), terminalOf(stdout), io.Discard, nil)
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			if len(c.Targets()) == 0 {
				return fail(stderr, exitError, "notify test: no notify: targets in %s or %s; see fleetwatch help notify", config.File, config.UserFile())
			}
			res, err := n.Test(to)
			if err != nil {
				return fail(stderr, exitError, "notify test: --to: %v", err)
			}
			code := exitOK
			for _, r := range res {
				if r.Err != nil {
					code = exitError
					fmt.Fprintf(stdout, "%s: not sent: %s\n", r.Target, termtext.Line(r.Err.Error()))
					continue
				}
				fmt.Fprintf(stdout, "%s: sent (%s)\n", r.Target, tries(r.Tries))
			}
			return code
		}
	})
	cmd.Long = "Sends one notice of kind test to each notify: target (or only --to's) now, past\nthe rate, and prints how each went; exit 2 when any was not sent. It is kept in\nthe record (fleetwatch notify log)."
	cmd.Example = "  fleetwatch notify test\n  fleetwatch notify test --to team"
	return cmd
}

func tries(n int) string {
	if n == 1 {
		return "1 try"
	}
	return fmt.Sprintf("%d tries", n)
}

func notifyWatchCmd() *cobra.Command {
	cmd := leaf("watch", "send the project's notices with no cockpit open, until stopped", func(fs *pflag.FlagSet) body {
		var root, claimsFlag string
		var every time.Duration
		rootFlag(fs, &root, rootHelp)
		fs.StringVar(&claimsFlag, "claims", "", claimsFlagHelp)
		fs.DurationVar(&every, "every", defaultEvery, "look at least this often (a worker going stale changes no file)")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "notify watch: unexpected argument %q", pos[0])
			}
			if every < time.Second {
				return fail(stderr, exitError, "--every: want at least 1s, not %v", every)
			}
			t, err := planfs.Open(findRoot(root))
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			remote, err := openRemote(t.Project, claimsFlag)
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			n, c, err := newNotifier(t.Project, terminalOf(stdout), stderr, remote)
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			if len(c.Targets()) == 0 {
				return fail(stderr, exitError, "notify watch: no notify: targets in %s or %s; see fleetwatch help notify", config.File, config.UserFile())
			}
			return runNotifyWatch(t, n, c, remote, every, stderr)
		}
	})
	cmd.Long = "Reads the project on every change to its tree and its workers, and every\n--every, and sends each notice true then to the notify: targets (each once,\nshared with every cockpit's sending). Runs until SIGINT or SIGTERM; run it\nfrom a systemd user unit or tmux to be told when no cockpit is open."
	cmd.Example = "  fleetwatch notify watch\n  fleetwatch notify watch --every 1m"
	return cmd
}

// runNotifyWatch sends until SIGINT or SIGTERM, saying each new trouble
// reading the project once.
func runNotifyWatch(t *planfs.Tree, n *notify.Notifier, c config.Notify, remote *claims.Opened, every time.Duration, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	opt := watchOptions(c, remote, every)
	if remote != nil {
		defer remote.Backend.Close()
	}
	said := ""
	opt.Looked = func(_ []model.Notice, err error) {
		if msg := errWords(err); msg != said {
			said = msg
			if msg != "" {
				say(stderr, "notify watch: %s", msg)
			}
		}
	}
	n.Start()
	say(stderr, "notify watch: sending %s's notices to %s; stop with Ctrl-C", t.Project, strings.Join(n.Targets(), ", "))
	notify.Watch(ctx, t, n, opt)
	n.Close(closeWait)
	return exitOK
}

func errWords(err error) string {
	if err == nil {
		return ""
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

func notifyLogCmd() *cobra.Command {
	cmd := leaf("log", "what was sent to each target, when, and what failed", func(fs *pflag.FlagSet) body {
		var root string
		var last int
		rootFlag(fs, &root, rootHelp)
		fs.IntVarP(&last, "last", "n", 20, "how many of the newest messages")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "notify log: unexpected argument %q", pos[0])
			}
			if last < 1 {
				return fail(stderr, exitError, "--last: want 1 or more, not %d", last)
			}
			lines, err := notify.ReadRecord(findRoot(root))
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			printRecord(stdout, lines, last)
			return exitOK
		}
	})
	cmd.Long = "One line per message, newest last: when it was claimed, the target, how it\nwent (sent, failed and why, or claimed: its sender stopped before saying),\nits kind and text. The record is var/fleet/notify/sent.jsonl."
	cmd.Example = "  fleetwatch notify log\n  fleetwatch notify log -n 100"
	return cmd
}

// printRecord prints the last n messages of the record, each with its
// outcome.
func printRecord(w io.Writer, lines []notify.Line, n int) {
	outcome := map[string]notify.Line{}
	var msgs []notify.Line
	for _, l := range lines {
		if l.State == notify.Claimed {
			msgs = append(msgs, l)
		} else {
			outcome[l.Msg] = l
		}
	}
	if len(msgs) == 0 {
		fmt.Fprintln(w, "nothing sent yet")
		return
	}
	for _, m := range msgs[max(0, len(msgs)-n):] {
		state := notify.Claimed
		if o, ok := outcome[m.Msg]; ok {
			state = o.State + " (" + tries(o.Tries) + ")"
			if o.Error != "" {
				state = o.State + ": " + o.Error
			}
		}
		fmt.Fprintln(w, termtext.Line(m.At.Local().Format("2006-01-02 15:04:05")+"  "+m.To+"  "+m.Kind+"  "+m.Text+"  → "+state))
	}
}
