package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/ui/serve"
)

// serveCmd is `fleetwatch serve`: the cockpit over SSH for a team's keys.
func serveCmd() *cobra.Command {
	var opt serve.Options
	var f uiFlags // --root, repeated, and --projects, as the cockpit's
	return leaf("serve", "serve the cockpit over SSH to operators' and viewers' keys", func(fs *pflag.FlagSet) body {
		fs.StringArrayVar(&f.roots, "root", nil, rootHelp+"; repeat it to serve several projects")
		fs.BoolVar(&f.projects, "projects", false, "serve every project listed in projects.yaml (see 'fleetwatch help ui')")
		fs.StringVar(&opt.Listen, "listen", "127.0.0.1:2222", "address to listen on, host:port")
		fs.StringVar(&opt.AuthorizedKeys, "authorized-keys", "", "operators' keys, an OpenSSH authorized_keys file (required)")
		fs.StringVar(&opt.Viewers, "viewers", "", "viewers' keys (see everything, act on nothing), same format")
		fs.StringVar(&f.claims, "claims", "", claimsFlagHelp)
		fs.StringVar(&opt.HostKey, "host-key", "", "the server's host key, made there when missing (default: var/fleet/serve/host_ed25519 in the project)")
		lim := &opt.Limits
		fs.IntVar(&lim.Sessions, "max-sessions", 256, "sessions open at once, in all")
		fs.IntVar(&lim.SessionsPerKey, "max-sessions-per-key", 32, "sessions open at once for one key")
		fs.DurationVar(&lim.LoginTimeout, "login-timeout", 60*time.Second, "time a connection has from connecting to its first session")
		fs.DurationVar(&lim.LoginIdle, "login-idle", 30*time.Second, "silence a connection is allowed while it has no session")
		fs.DurationVar(&lim.SessionLength, "max-session-length", 0, "end every session this long after it opened (0: no limit)")
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "serve: unexpected argument %q", pos[0])
			}
			done, err := serveSetup(&opt, &f, stdout, stderr)
			if err != nil {
				return fail(stderr, exitError, "serve: %v", err)
			}
			defer done()
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if err := serve.Run(ctx, opt); err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			return exitOK
		}
	})
}

// serveSetup checks serve's flags and completes opt: the project, its claims
// backend, this binary for spawned workers, the log and the line that says
// serve listens. done closes the claims backend.
func serveSetup(opt *serve.Options, f *uiFlags, stdout, stderr io.Writer) (done func(), err error) {
	if err := checkLimits(opt.Limits); err != nil {
		return nil, err
	}
	if opt.AuthorizedKeys == "" {
		return nil, errors.New("--authorized-keys FILE is required (the operators' keys)")
	}
	// Spawned workers run this very binary, as from the local UI.
	opt.Self, _ = os.Executable()
	opt.Log = stderr
	opt.Ready = func(addr string) { fmt.Fprintf(stdout, "fleetwatch serve: listening on %s\n", addr) }
	// The notifiers' terminal notifications go to the sessions' terminals.
	opt.Terminals = serve.NewTerminals()
	several, err := f.severalProjects()
	if err != nil || several != nil {
		if err != nil {
			return nil, err
		}
		return f.serveSeveral(opt, several, stderr)
	}
	root, claimsName := "", f.claims
	if len(f.roots) == 1 {
		root = f.roots[0]
	}
	opt.Root = findRoot(root)
	// Operators act through serve: a worker's rule on --claims.
	if _, _, _, err := actingClaims(opt.Root, claimsName, stderr); err != nil {
		return nil, err
	}
	remote, err := openRemote(opt.Root, claimsName)
	if err != nil {
		return nil, err
	}
	stopNotices, stuck, err := sendNotices(opt.Root, remote, opt.Terminals, stderr)
	if err != nil {
		return nil, err
	}
	done, opt.StuckAfter = stopNotices, stuck
	if remote != nil {
		done = func() { stopNotices(); remote.Backend.Close() }
		opt.Claims = remote
	}
	opt.Uncontained = uncontained(opt.Root)
	return done, nil
}

// checkLimits refuses a bound that would turn a limit off or make serve unusable.
func checkLimits(l serve.Limits) error {
	switch {
	case l.Sessions < 1:
		return fmt.Errorf("--max-sessions %d: at least 1", l.Sessions)
	case l.SessionsPerKey < 1:
		return fmt.Errorf("--max-sessions-per-key %d: at least 1", l.SessionsPerKey)
	case l.LoginTimeout <= 0:
		return fmt.Errorf("--login-timeout %v: more than 0", l.LoginTimeout)
	case l.LoginIdle <= 0:
		return fmt.Errorf("--login-idle %v: more than 0", l.LoginIdle)
	case l.SessionLength < 0:
		return fmt.Errorf("--max-session-length %v: 0 (no limit) or more", l.SessionLength)
	}
	return nil
}
