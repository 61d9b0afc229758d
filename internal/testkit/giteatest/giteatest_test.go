package giteatest

import (
	"os"
	"os/exec"
	"path/filepath"
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
	dir := t.TempDir()
	git := func(args ...string) { gitOut(t, dir, args...) }
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "first")
	git("push", "-q", s.GitURL(repo), "main")
	head := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
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

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
