package gitclaims

import (
	"context"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/gitenv"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// backendName is the backend's name in fleetwatch.yaml, --claims and its leases.
const backendName = "git"

// defaultRemote is the remote whose lease refs hold the claims when
// claims: names none.
const defaultRemote = "origin"

func init() {
	claims.Register(claims.Description{
		Name:   backendName,
		Says:   "the remote's lease refs",
		Open:   func(cfg claims.Config) (claims.Backend, error) { return Open(cfg) },
		Where:  func(cfg claims.Config) string { return backendName + " " + remoteName(cfg) },
		Doctor: doctor,
		KeptIn: func(slug string) string { return "git ref " + leaseRef(slug) },
	})
}

func remoteName(cfg claims.Config) string {
	if cfg.Remote == "" {
		return defaultRemote
	}
	return cfg.Remote
}

// doctor checks the one thing a machine needs before its first claim: the
// remote is there (reaching it is the first claim's business).
func doctor(ctx context.Context, cfg claims.Config) []claims.Finding {
	remote := remoteName(cfg)
	r, err := gitenv.Run(ctx, gitenv.Call{Dir: cfg.Project, Args: []string{"remote", "get-url", remote}, Timeout: 10 * time.Second})
	if err != nil {
		return []claims.Finding{{Fail: true, Text: "backend git, but no remote " + remote + " here (git remote add " + remote + " URL)"}}
	}
	return []claims.Finding{{Text: "the lease refs of " + remote + " (" + r.Text() + ")"}}
}
