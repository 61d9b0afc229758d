package landing

import (
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/forge"
)

func TestOnlyAPersonsApprovalOfTheExactTipCounts(t *testing.T) {
	pr := PR{Tip: "tip1", Pushed: "cand1", SeenReview: 2}
	reviews := []forge.Review{
		{ID: 1, Author: "alice", State: forge.ReviewApproved, Commit: "tip1"}, // seen already
		{ID: 3, Author: "bot", State: forge.ReviewApproved, Commit: "tip1"},   // the token's own
		{ID: 4, Author: "bob", State: forge.ReviewApproved, Commit: "old"},    // an older commit
		{ID: 5, Author: "carol", State: forge.ReviewCommented, Commit: "tip1"},
		{ID: 6, Author: "dan", State: forge.ReviewApproved, Commit: "cand1"},
		{ID: 7, Author: "erin", State: forge.ReviewApproved, Commit: "tip1"},
		{ID: 8, Author: "", State: forge.ReviewApproved, Commit: "tip1"},
		{ID: 9, Author: "mal\x1b[2Jory", State: forge.ReviewApproved, Commit: "tip1"},
		{ID: 10, Author: "../../x", State: forge.ReviewApproved, Commit: "tip1"},
	}
	got := pr.newApprovals(reviews, "bot", "tip1")
	var who []string
	for _, r := range got {
		who = append(who, r.Author)
	}
	if strings.Join(who, ",") != "dan,erin" || pr.SeenReview != 10 {
		t.Fatalf("approvals %v, seen %d", who, pr.SeenReview)
	}
	// Taken once: a second read adds none.
	if again := pr.newApprovals(reviews, "bot", "tip1"); len(again) != 0 {
		t.Fatalf("again: %v", again)
	}
	// The branch moved on since the push: no approval counts.
	pr = PR{Tip: "tip1", Pushed: "tip1"}
	if got := pr.newApprovals(reviews, "bot", "tip2"); len(got) != 0 {
		t.Fatalf("moved: %v", got)
	}
}

func TestCommentsWaitOnceAndBounded(t *testing.T) {
	var pr PR
	var cs []forge.Comment
	for i := 1; i <= maxInboxComments+10; i++ {
		cs = append(cs, forge.Comment{ID: int64(i), Author: "alice", Body: "c", At: time.Unix(int64(i), 0)})
	}
	cs = append(cs, forge.Comment{ID: 1000, Author: "bot", Body: "fleetwatch's own"})
	pr.takeComments(cs, "bot")
	if len(pr.Comments) != maxInboxComments || pr.Comments[0].ID != 11 || pr.SeenComment != 1000 {
		t.Fatalf("%d comments from %d, seen %d", len(pr.Comments), pr.Comments[0].ID, pr.SeenComment)
	}
	pr.takeComments(cs, "bot")
	if len(pr.Comments) != maxInboxComments {
		t.Fatalf("taken twice: %d", len(pr.Comments))
	}
}

func TestAPRLandsOnlyOpenAndAsPushed(t *testing.T) {
	rec := PR{Number: 7, Pushed: "aaaa"}
	for _, c := range []struct {
		got  forge.PR
		want string
	}{
		{forge.PR{Number: 7, State: forge.StateOpen, HeadSHA: "aaaa"}, ""},
		{forge.PR{Number: 7, State: forge.StateOpen, HeadSHA: "bbbb"}, "a commit came after the approval"},
		{forge.PR{Number: 7, State: forge.StateClosed, HeadSHA: "aaaa"}, "was closed on the forge"},
		{forge.PR{Number: 7, State: forge.StateMerged, HeadSHA: "aaaa"}, "merged on the forge by hand"},
	} {
		err := prLandable("x", rec, c.got)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.got, err, c.want)
		}
	}
}

func TestCheckStatuses(t *testing.T) {
	for _, c := range []struct {
		in    CheckResult
		state string
		text  string
	}{
		{CheckResult{Result: Pass, Took: 3 * time.Second}, forge.StatusSuccess, "pass on this exact tree in 3s"},
		{CheckResult{Result: Pass, Flaky: true}, forge.StatusSuccess, "passed on a retry of this exact tree (flaky)"},
		{CheckResult{Result: Fail, Note: "exit 1"}, forge.StatusFailure, "fail: exit 1"},
		{CheckResult{Result: Timeout}, forge.StatusFailure, "timeout on this exact tree"},
		{CheckResult{Result: Running}, forge.StatusPending, "checking this exact commit"},
		{CheckResult{Result: Error}, forge.StatusError, "error on this exact tree"},
	} {
		if s, txt := statusState(c.in.Result), statusText(c.in); s != c.state || txt != c.text {
			t.Errorf("%+v: %s %q, want %s %q", c.in, s, txt, c.state, c.text)
		}
	}
}
