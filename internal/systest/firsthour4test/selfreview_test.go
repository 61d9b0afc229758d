package firsthour4test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// With one endpoint, the one that wrote the change is the only one that
// fits to review it: review --peer refuses in one line naming the plan,
// the endpoint and --allow-self; with --allow-self the review runs and
// both its output and its record say it was a self-review.
func TestSelfReviewIsRefusedOrSaid(t *testing.T) {
	t.Parallel()
	dir := fwtest.GitProject(t, fwtest.Plan{Rel: "features/x.md"})
	argv := func(args ...string) string {
		b, _ := json.Marshal(append([]string{fwtest.FakeAgent(t)}, args...))
		return string(b)
	}
	writeFile(t, dir, "endpoints.yaml", "endpoints:\n  - name: solo\n    tier: mid\n    model: fake-1\n"+
		"    command: "+argv("-commit")+"\n    review_command: "+argv("-verdict", "ACCEPT")+"\n")
	fwtest.Want(t, fwtest.Run(t, dir, "work-once", "--run", "--ensure-worktree", "--endpoint", "solo", "--agent-id", "mid-1"), 0)
	if !fwtest.Exists(dir, "review-needed/x.md") {
		t.Fatal("the change did not reach review-needed/")
	}
	r := fwtest.Run(t, dir, "review", "x", "--peer")
	fwtest.OneLineError(t, r, "x was written by endpoint solo", "--allow-self")
	if fwtest.Exists(dir, "reviews/x") {
		t.Error("a refused self-review stored a review")
	}
	r = fwtest.Run(t, dir, "review", "x", "--peer", "--allow-self")
	fwtest.Want(t, r, 0)
	if !strings.HasPrefix(r.Stdout, "self-review by review-solo, of the endpoint solo that wrote it (--allow-self): ACCEPT (.plans/reviews/x/") {
		t.Errorf("stdout %q", r.Stdout)
	}
	tip := strings.TrimSpace(fwtest.GitOut(t, dir, "rev-parse", "feature/x"))
	if text := fwtest.ReadRel(t, dir, "reviews/x/"+tip+".md"); !strings.Contains(text, "- **Self review:** yes") || !strings.Contains(text, "- **Endpoint:** solo\n") {
		t.Errorf("the review record does not say it was a self-review:\n%s", text)
	}
	if r := fwtest.Run(t, dir, "review", "x", "--approve", "--allow-self"); r.Code != 2 || !strings.Contains(r.Stderr, "--allow-self") {
		t.Errorf("--allow-self without --peer: %v", r)
	}
}
