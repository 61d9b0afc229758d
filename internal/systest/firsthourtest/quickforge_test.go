package firsthourtest

import (
	"os"
	"strings"
	"testing"

	"code.gitea.io/sdk/gitea"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/internal/testkit/giteatest"
)

// The quick start's forge variant works as written against a real Gitea:
// its lines go in right after scaffold (the example's url and repo made
// the test's), the token is exported, and the plan lands through a PR the
// driver opened, which the forge records as merged.
func TestReadmeQuickStartThroughAForge(t *testing.T) {
	t.Parallel()
	g := giteatest.Shared(t)
	repo := g.CreateRepo(t, g.Admin, "quickstart")
	own, forge := quickStart(t)
	if len(forge) > 3 {
		t.Errorf("the forge variant is %d commands, want at most 3", len(forge))
	}
	dir := fwtest.GitRepo(t)
	testkit.Git(t, dir, "push", "-q", g.GitURL(repo), "HEAD:refs/heads/main")
	g.WaitBranch(t, repo, "main", fwtest.GitOut(t, dir, "rev-parse", "HEAD"))
	var extra []string
	var cmds [][]string
	for _, words := range own {
		cmds = append(cmds, words)
		if len(words) < 2 || words[1] != "scaffold" {
			continue
		}
		for _, fw := range forge {
			switch {
			case fw[0] == "export" && strings.HasPrefix(fw[1], "FORGE_TOKEN="):
				extra = append(extra, "FORGE_TOKEN="+g.Token)
			default:
				cmds = append(cmds, fw)
			}
		}
	}
	if len(extra) == 0 {
		t.Fatal("the forge variant exports no FORGE_TOKEN")
	}
	runQuickStart(t, dir, cmds, extra, strings.NewReplacer("https://git.example.com", g.URL, "team/api", repo))
	owner, name, _ := strings.Cut(repo, "/")
	prs, _, err := g.Client(t).ListRepoPullRequests(owner, name, gitea.ListPullRequestsOptions{State: gitea.StateAll})
	if err != nil || len(prs) != 1 || !prs[0].HasMerged || prs[0].Head == nil || prs[0].Head.Ref != "feature/fix-login" {
		t.Fatalf("PRs on the forge: %+v (%v)", prs, err)
	}
	b, _, err := g.Client(t).GetRepoBranch(owner, name, "main")
	if err != nil || b.Commit == nil || b.Commit.ID != fwtest.GitOut(t, dir, "rev-parse", "main") {
		t.Fatalf("main on the forge is not the local main: %+v (%v)", b, err)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}
