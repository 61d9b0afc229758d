package planfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

const c1 = "3f2a1c9d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49"
const c2 = "aaaa1c9d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a49"

// toReview claims features/<slug>.md as agent and completes it into
// review-needed/, as a worker's run does.
func toReview(t *testing.T, tr *Tree, slug, agent string) string {
	t.Helper()
	return claimToReview(t, tr, "features/"+slug+".md", agent)
}

func claimToReview(t *testing.T, tr *Tree, ready, agent string) string {
	t.Helper()
	c, err := tr.ClaimHeld(ready, agent, 60)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := tr.Complete(c.Rel, model.ReviewNeeded, Actor{AgentID: agent, Token: c.Token})
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func lastEvent(t *testing.T, tr *Tree, name string) Event {
	t.Helper()
	evs, _ := tr.Events()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Event == name {
			return evs[i]
		}
	}
	t.Fatalf("no %s event in %+v", name, evs)
	return Event{}
}

func TestReviewsRoundTripAndAreNotALane(t *testing.T) {
	tr := mkTree(t, "review-needed/x.md: - **Preferred models:** mid")
	at := time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)
	if _, err := tr.WriteReview(ReviewFile{Slug: "x", Commit: c1, Reviewer: "review-mid", Endpoint: "mid", Base: c2, Verdict: "REVISE", At: at}, []byte("## Findings\n- a bug")); err != nil {
		t.Fatal(err)
	}
	p, err := tr.WriteReview(ReviewFile{Slug: "x", Commit: c2, Reviewer: "review-hi", Verdict: "ACCEPT", At: at.Add(time.Hour)}, []byte("fine\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(tr.Plans, "reviews", "x", c2+".md"); p != want {
		t.Fatalf("path %s, want %s", p, want)
	}
	got, err := tr.ReadReviews("x")
	if err != nil || len(got) != 2 {
		t.Fatalf("ReadReviews = %+v, %v", got, err)
	}
	if got[0].Commit != c2 || got[1].Commit != c1 || got[1].Verdict != "REVISE" || got[1].Reviewer != "review-mid" || got[1].Endpoint != "mid" || got[1].Base != c2 || !got[1].At.Equal(at) {
		t.Fatalf("reviews read back as %+v", got)
	}
	text, _ := os.ReadFile(got[1].Path)
	if !strings.Contains(string(text), "- **Verdict:** REVISE\n") || !strings.HasSuffix(string(text), "## Findings\n- a bug\n") {
		t.Fatalf("review file:\n%s", text)
	}
	if e := lastEvent(t, tr, "review"); e.Slug != "x" || e.AgentID != "review-hi" || !strings.HasPrefix(e.Reason, "ACCEPT") {
		t.Fatalf("review event %+v", e)
	}
	if _, err := tr.WriteApproval("x", c1, Agent("operator-root")); err != nil {
		t.Fatal(err)
	}
	snap := scan(t, tr)
	if len(snap.Plans) != 1 || len(snap.Warnings) != 0 {
		t.Fatalf("scan with reviews/: plans %v warnings %+v", rels(snap), snap.Warnings)
	}
	if w := tr.Check(snap); len(w) != 0 {
		t.Fatalf("check warns about reviews/: %+v", w)
	}
	if r := tr.Repair(snap); len(r.Fixed) != 0 || len(r.Unfixed) != 0 {
		t.Fatalf("repair touched reviews/: %+v", r)
	}
}

func TestReviewsRefuseBadInput(t *testing.T) {
	tr := mkTree(t)
	for _, r := range []ReviewFile{
		{Slug: "x", Commit: "../../etc", Verdict: "ACCEPT"},
		{Slug: "../x", Commit: c1, Verdict: "ACCEPT"},
		{Slug: "x", Commit: c1, Verdict: "MAYBE"},
	} {
		if _, err := tr.WriteReview(r, nil); err == nil {
			t.Errorf("WriteReview(%+v) accepted", r)
		}
	}
	if _, err := tr.WriteApproval("x", "HEAD", Agent("op")); err == nil {
		t.Error("approval of a non-hex commit accepted")
	}
	os.MkdirAll(filepath.Join(tr.Plans, "reviews", "y"), 0o755)
	os.WriteFile(filepath.Join(tr.Plans, "reviews", "y", "approved.json"), []byte("{not json"), 0o644)
	if ap, err := tr.ReadApproval("y"); err == nil || ap != nil || !strings.Contains(err.Error(), "reviews/y/approved.json") {
		t.Fatalf("corrupt approval read as %+v, %v", ap, err)
	}
	os.WriteFile(filepath.Join(tr.Plans, "reviews", "y", "notes.md"), []byte("# just notes\n"), 0o644)
	if rs, err := tr.ReadReviews("y"); err != nil || len(rs) != 0 {
		t.Fatalf("a file with no review header read as %+v, %v", rs, err)
	}
}

func TestReviewsNeverFollowASymlink(t *testing.T) {
	tr := mkTree(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(tr.Plans, "reviews")); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.WriteApproval("x", c1, Agent("op")); err == nil {
		t.Fatal("approval written through a symlinked reviews/")
	}
	if _, err := tr.WriteReview(ReviewFile{Slug: "x", Commit: c1, Verdict: "ACCEPT"}, nil); err == nil {
		t.Fatal("review written through a symlinked reviews/")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("wrote outside the project: %v", entries)
	}
}

func TestApprovalWriteReadVoid(t *testing.T) {
	tr := mkTree(t)
	if ap, err := tr.ReadApproval("x"); ap != nil || err != nil {
		t.Fatalf("no approval read as %+v, %v", ap, err)
	}
	if _, err := tr.WriteApproval("x", c1, Agent("operator-root")); err != nil {
		t.Fatal(err)
	}
	ap, err := tr.ReadApproval("x")
	if err != nil || ap == nil || ap.Commit != c1 || ap.By != "operator-root" || ap.At.IsZero() {
		t.Fatalf("approval read as %+v, %v", ap, err)
	}
	if e := lastEvent(t, tr, "approve"); e.Slug != "x" || e.AgentID != "operator-root" {
		t.Fatalf("approve event %+v", e)
	}
	if err := tr.VoidApproval("x", Agent("operator-root").Because("conflict in a.go")); err != nil {
		t.Fatal(err)
	}
	if ap, _ := tr.ReadApproval("x"); ap != nil {
		t.Fatalf("voided approval still there: %+v", ap)
	}
	if e := lastEvent(t, tr, "void-approval"); e.Reason != "conflict in a.go" {
		t.Fatalf("void event %+v", e)
	}
	if err := tr.VoidApproval("x", Agent("op")); err != nil {
		t.Fatalf("voiding no approval: %v", err)
	}
}

func TestAuthorIsWhoMovedItToReview(t *testing.T) {
	tr := mkTree(t, "features/x.md: - **Preferred models:** mid")
	if a := tr.Author("x"); a != "" {
		t.Fatalf("author before any run: %q", a)
	}
	rel := toReview(t, tr, "x", "mid-1")
	if a := tr.Author("x"); a != "mid-1" {
		t.Fatalf("author %q, want mid-1", a)
	}
	if _, err := tr.SendBack(rel, "fix it", Agent("operator-root")); err != nil {
		t.Fatal(err)
	}
	toReview(t, tr, "x", "hi-2")
	if a := tr.Author("x"); a != "hi-2" {
		t.Fatalf("author after a second run %q, want hi-2", a)
	}
}

func TestSendBackNotesMovesAndVoids(t *testing.T) {
	tr := mkTree(t, "bugs/x.md: - **Preferred models:** mid")
	c, err := tr.ClaimHeld("bugs/x.md", "mid-1", 60)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := tr.Complete(c.Rel, model.ReviewNeeded, Actor{AgentID: "mid-1", Token: c.Token})
	if err != nil {
		t.Fatal(err)
	}
	tr.WriteApproval("x", c1, Agent("operator-root"))
	dst, err := tr.SendBack(rel, "the test is flaky\nsee line 3", Agent("operator-root"))
	if err != nil || dst != "bugs/x.md" {
		t.Fatalf("SendBack = %q, %v; want bugs/x.md (its origin)", dst, err)
	}
	text, _ := os.ReadFile(tr.Abs(dst))
	day := time.Now().UTC().Format("2006-01-02")
	want := "## Review notes\n\n- " + day + " operator-root (needs work): the test is flaky\n  see line 3\n"
	if !strings.HasSuffix(string(text), want) {
		t.Fatalf("plan after send-back:\n%s\nwant it to end in\n%s", text, want)
	}
	if ap, _ := tr.ReadApproval("x"); ap != nil {
		t.Fatal("approval survived the send-back")
	}
	if e := lastEvent(t, tr, "needs-work"); e.From != rel || e.To != dst || e.AgentID != "operator-root" || e.Reason != "the test is flaky see line 3" {
		t.Fatalf("needs-work event %+v", e)
	}
	if _, err := tr.SendBack(dst, "again", Agent("op")); err == nil {
		t.Fatal("send-back of a ready plan accepted")
	}
	rel = claimToReview(t, tr, dst, "mid-1")
	if _, err := tr.SendBack(rel, "  ", Agent("op")); err == nil {
		t.Fatal("send-back without a note accepted")
	}
	dst, err = tr.SendBack(rel, "second", Agent("op"))
	if err != nil {
		t.Fatal(err)
	}
	text, _ = os.ReadFile(tr.Abs(dst))
	if strings.Count(string(text), "## Review notes") != 1 || !strings.HasSuffix(string(text), "see line 3\n- "+day+" op (needs work): second\n") {
		t.Fatalf("second note:\n%s", text)
	}
}

func TestSendBackWithoutOriginGoesToFeatures(t *testing.T) {
	tr := mkTree(t, "review-needed/x.md: - **Preferred models:** mid")
	dst, err := tr.SendBack("review-needed/x.md", "n", Agent("op"))
	if err != nil || dst != "features/x.md" {
		t.Fatalf("SendBack = %q, %v", dst, err)
	}
}

func TestDeferAndLand(t *testing.T) {
	tr := mkTree(t, "features/x.md: - **Preferred models:** mid", "features/y.md: - **Preferred models:** mid")
	rel := toReview(t, tr, "x", "mid-1")
	tr.WriteApproval("x", c1, Agent("op"))
	dst, err := tr.Defer(rel, "after the release", Agent("op"))
	if err != nil || dst != "blocked/x.md" {
		t.Fatalf("Defer = %q, %v", dst, err)
	}
	text, _ := os.ReadFile(tr.Abs(dst))
	if !strings.Contains(string(text), " op (deferred): after the release\n") {
		t.Fatalf("deferred plan:\n%s", text)
	}
	if ap, _ := tr.ReadApproval("x"); ap != nil {
		t.Fatal("approval survived the defer")
	}
	if e := lastEvent(t, tr, "defer"); e.To != "blocked/x.md" {
		t.Fatalf("defer event %+v", e)
	}
	rel = toReview(t, tr, "y", "mid-1")
	dst, err = tr.Land(rel, Agent("op"))
	if err != nil || dst != "completed/y.md" {
		t.Fatalf("Land = %q, %v", dst, err)
	}
	if e := lastEvent(t, tr, "land"); e.From != rel || e.AgentID != "op" {
		t.Fatalf("land event %+v", e)
	}
	if _, err := tr.Land(dst, Agent("op")); err == nil {
		t.Fatal("landing a completed plan accepted")
	}
}

func TestWithReviewNote(t *testing.T) {
	b := "- d op (needs work): n\n"
	for _, tc := range []struct{ in, want string }{
		{"# x\n", "# x\n\n## Review notes\n\n" + b},
		{"# x", "# x\n\n## Review notes\n\n" + b},
		{"# x\n\n## Review notes\n\n- old\n", "# x\n\n## Review notes\n\n- old\n" + b},
		{"# x\n\n## Review notes\n- old\n\n## Done when\n- y\n", "# x\n\n## Review notes\n- old\n" + b + "\n## Done when\n- y\n"},
		{"# x\n\n## Review notes\n\n## Done when\n", "# x\n\n## Review notes\n\n" + b + "\n## Done when\n"},
		{"# x\n\n## Review notes\n\n" + b, "# x\n\n## Review notes\n\n" + b},
	} {
		if got := WithReviewNote(tc.in, b); got != tc.want {
			t.Errorf("WithReviewNote(%q) =\n%q\nwant\n%q", tc.in, got, tc.want)
		}
	}
}
