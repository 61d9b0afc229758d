package forgetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/fleetwatch/fleetwatch/internal/systest/landkit"
	"github.com/fleetwatch/fleetwatch/internal/testkit/giteatest"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// A face's background reading spends no call on an open PR the listing
// says did not change, and reads one that did: counted at a proxy in front
// of the real Gitea.
func TestBackgroundReadingSkipsQuietPRs(t *testing.T) {
	g := giteatest.Shared(t)
	repo, dir, pr, _ := queued(t, g, "quiet", "queue", nil)
	owner, name, _ := strings.Cut(repo, "/")
	target, _ := url.Parse(g.URL)
	var reads atomic.Int32
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/reviews") || strings.HasSuffix(r.URL.Path, "/comments") {
			reads.Add(1)
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	settings := landkit.ReadFile(t, dir, "fleetwatch.yaml")
	landkit.Write(t, dir, "fleetwatch.yaml", strings.Replace(settings, g.URL, front.URL, 1))
	t.Setenv(tokenVar, g.Token)
	tree, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sync := func() {
		t.Helper()
		if said, err := landing.SyncForgeInBackground(context.Background(), tree); err != nil {
			t.Fatalf("%v %v", said, err)
		}
	}
	sync()
	if n := reads.Swap(0); n != 0 {
		t.Fatalf("a quiet PR cost %d reads of its reviews and comments", n)
	}
	// The forge keeps updated times to the second: a comment in the same
	// second as the last reading waits for the fullEvery-th one.
	time.Sleep(1100 * time.Millisecond)
	cai := g.NewUser(t, "cai-"+name)
	if _, _, err := g.ClientAs(t, cai).CreateIssueComment(owner, name, int64(pr.Number), gitea.CreateIssueCommentOption{Body: "one more thing"}); err != nil {
		t.Fatal(err)
	}
	sync()
	if n := reads.Swap(0); n == 0 {
		t.Fatal("a PR with a new comment was not read")
	}
	rec, _ := os.ReadFile(filepath.Join(dir, "var", "fleet", "forge", "x.json"))
	if !strings.Contains(string(rec), "one more thing") {
		t.Fatalf("the comment did not come in:\n%s", rec)
	}
}
