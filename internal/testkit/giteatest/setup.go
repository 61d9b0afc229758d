package giteatest

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"
)

// CreateRepo makes an empty repository owner/name (owner is the admin or
// a user made by NewUser) and returns "owner/name". Tests push its first
// commit themselves.
func (s *Server) CreateRepo(tb testing.TB, owner, name string) string {
	tb.Helper()
	c := s.Client(tb)
	_, _, err := c.AdminCreateRepo(owner, gitea.CreateRepoOption{Name: name, DefaultBranch: "main"})
	if err != nil {
		tb.Fatalf("giteatest: create repo %s/%s: %v", owner, name, err)
	}
	// fleetwatch's queue pushes to base itself and then marks the PR
	// manually merged; Gitea allows that per repository.
	yes := true
	if _, _, err := c.EditRepo(owner, name, gitea.EditRepoOption{AllowManualMerge: &yes}); err != nil {
		tb.Fatalf("giteatest: allow manual merges in %s/%s: %v", owner, name, err)
	}
	return owner + "/" + name
}

// userPassword is every NewUser's password (test-only).
const userPassword = "fleetwatch-user-pw"

// NewUser makes a plain user login (a person who reviews and approves)
// and returns a token of theirs with every scope.
func (s *Server) NewUser(tb testing.TB, login string) string {
	tb.Helper()
	no := false
	_, _, err := s.Client(tb).AdminCreateUser(gitea.CreateUserOption{
		Username: login, Email: login + "@example.com", Password: userPassword, MustChangePassword: &no,
	})
	if err != nil {
		tb.Fatalf("giteatest: create user %s: %v", login, err)
	}
	// A token is made with the user's own password, never by the admin.
	c, err := gitea.NewClient(s.URL, gitea.SetBasicAuth(login, userPassword), gitea.SetGiteaVersion(""))
	if err != nil {
		tb.Fatal(err)
	}
	tok, _, err := c.CreateAccessToken(gitea.CreateAccessTokenOption{
		Name: "fleetwatch-test", Scopes: []gitea.AccessTokenScope{gitea.AccessTokenScopeAll},
	})
	if err != nil {
		tb.Fatalf("giteatest: token for %s: %v", login, err)
	}
	return tok.Token
}

// Collaborate gives login write access to repo (owner/name).
func (s *Server) Collaborate(tb testing.TB, repo, login string) {
	tb.Helper()
	owner, name, _ := strings.Cut(repo, "/")
	w := gitea.AccessModeWrite
	if _, err := s.Client(tb).AddCollaborator(owner, name, login, gitea.AddCollaboratorOption{Permission: &w}); err != nil {
		tb.Fatalf("giteatest: add %s to %s: %v", login, repo, err)
	}
}

// Protection is what ProtectBranch asks of a branch.
type Protection struct {
	// Pushers may push to the branch directly; nil lets every writer
	// push, an empty non-nil list nobody.
	Pushers []string
	// Approvals is how many approvals a merge needs.
	Approvals int
	// Checks are the status contexts a merge needs.
	Checks []string
}

// ProtectBranch protects branch of repo (owner/name) as p says.
func (s *Server) ProtectBranch(tb testing.TB, repo, branch string, p Protection) {
	tb.Helper()
	owner, name, _ := strings.Cut(repo, "/")
	opt := gitea.CreateBranchProtectionOption{
		BranchName:             branch,
		RuleName:               branch,
		EnablePush:             p.Pushers == nil || len(p.Pushers) > 0,
		EnablePushWhitelist:    len(p.Pushers) > 0,
		PushWhitelistUsernames: p.Pushers,
		RequiredApprovals:      int64(p.Approvals),
		EnableStatusCheck:      len(p.Checks) > 0,
		StatusCheckContexts:    p.Checks,
	}
	if _, _, err := s.Client(tb).CreateBranchProtection(owner, name, opt); err != nil {
		tb.Fatalf("giteatest: protect %s of %s: %v", branch, repo, err)
	}
}

// GitURL is repo's (owner/name) clone URL with the admin's token in it,
// for tests' own pushes only: the product never puts a token in a URL.
func (s *Server) GitURL(repo string) string {
	u, _ := url.Parse(s.URL + "/" + repo + ".git")
	u.User = url.UserPassword(s.Admin, s.Token)
	return u.String()
}

// WaitBranch waits (up to 10 s) until the API shows branch of repo at
// commit: a push is processed a moment after git returns (the first
// push's repository is still "empty" for ~0.2 s).
func (s *Server) WaitBranch(tb testing.TB, repo, branch, commit string) {
	tb.Helper()
	owner, name, _ := strings.Cut(repo, "/")
	c := s.Client(tb)
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _, err := c.GetRepoBranch(owner, name, branch)
		if err == nil && b.Commit != nil {
			if got = b.Commit.ID; got == commit {
				return
			}
		}
	}
	tb.Fatalf("giteatest: %s of %s is at %q, not %s, 10 s after the push", branch, repo, got, commit)
}
