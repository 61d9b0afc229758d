package workers

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A keeper whose lease is lost never asks its backend again (b is nil: a
// call would panic): no renewal, no push, even with local commits the
// remote lacks, and no completion; the log says why the branch was not
// pushed. Lost for having passed its deadline is the same, and sticks.
func TestKeeperLostNeverPushes(t *testing.T) {
	repo := testkit.Repo(t)
	testkit.Git(t, repo, "branch", "feature/a")
	log, err := look.OpenLog(repo, "w", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ttl := time.Minute
	k := &backendKeeper{ttl: ttl, every: ttl / 3, repo: repo, log: log, baseKnown: true,
		held: claims.Held{Slug: "a", Rel: "features/a.md", Renewed: time.Now()}}
	k.lose("renewal rejected: taken over")
	if k.Holds() {
		t.Fatal("a lost keeper still holds")
	}
	if lost, err := k.Renew(); err != nil || !strings.Contains(lost, "taken over") {
		t.Fatalf("Renew of a lost lease: %q, %v", lost, err)
	}
	k.push()
	if _, err := k.Complete("review-needed"); err == nil || !strings.Contains(err.Error(), "feature/a not pushed") {
		t.Fatalf("Complete of a lost lease: %v", err)
	}
	text, _ := os.ReadFile(log.Path)
	if !strings.Contains(string(text), "did not push feature/a (local tip") {
		t.Errorf("the log does not say the branch was not pushed:\n%s", text)
	}

	late := &backendKeeper{ttl: ttl, every: ttl / 3, repo: repo, baseKnown: true,
		held: claims.Held{Slug: "a", Renewed: time.Now().Add(-ttl)}}
	late.push()
	if late.lost == "" || !strings.Contains(late.lost, "not renewed for") {
		t.Fatalf("a keeper past its deadline pushed or is not lost: %q", late.lost)
	}
	late.held.Renewed = time.Now() // a renewal could not bring it back
	if late.Holds() {
		t.Fatal("lost past the deadline, then held again")
	}
}
