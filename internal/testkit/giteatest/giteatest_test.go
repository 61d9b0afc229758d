package giteatest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestStart starts a Gitea, pushes a commit into a new repository over
// HTTP with the admin's token and reads the branch back through the API.
func TestStart(t *testing.T) {
	t0 := time.Now()
	s := Start(t)
	t.Logf("gitea up with admin and token in %v", time.Since(t0))
	repo := s.CreateRepo(t, s.Admin, "hello")
	w := NewWork(t)
	head := w.Commit("a.txt", "a\n", "first")
	w.Git("push", "-q", s.GitURL(repo), "main")
	s.WaitBranch(t, repo, "main", head)
	tok := s.NewUser(t, "carol")
	s.Collaborate(t, repo, "carol")
	me, _, err := s.ClientAs(t, tok).GetMyUserInfo()
	if err != nil || me.UserName != "carol" {
		t.Fatalf("carol's token says %+v, %v", me, err)
	}
	s.ProtectBranch(t, repo, "main", Protection{Pushers: []string{s.Admin}, Approvals: 1, Checks: []string{"fleetwatch/test"}})
	t.Logf("all in %v", time.Since(t0))
}

// TestStopKills: after Stop nothing answers on the server's port.
func TestStopKills(t *testing.T) {
	s := Start(t)
	s.Stop()
	c := &http.Client{Timeout: time.Second}
	if resp, err := c.Get(s.URL + "/api/healthz"); err == nil {
		resp.Body.Close()
		t.Fatalf("gitea still answers after Stop: %s", resp.Status)
	}
}

// TestBinaryMissing: without a binary the skip says how to build one.
func TestBinaryMissing(t *testing.T) {
	t.Setenv("FLEETWATCH_GITEA", "/nonexistent/gitea")
	if _, skip := Binary(); !strings.Contains(skip, "/nonexistent/gitea") {
		t.Errorf("skip with a missing FLEETWATCH_GITEA = %q", skip)
	}
	t.Setenv("FLEETWATCH_GITEA", "")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	path, skip := Binary()
	if path != "" || !strings.Contains(skip, `go build -C internal/tools/gitea -tags "sqlite sqlite_unlock_notify"`) {
		t.Errorf("Binary() without a cached build = %q, %q", path, skip)
	}
}
