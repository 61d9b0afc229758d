package ui

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/landing"
)

// approvedListing is the sample queue with flaky-ci approved at its tip,
// as the merge pane reads it after the approval.
func approvedListing(p *project) landing.Listing {
	l := sampleListing(p)
	for i := range l.Items {
		if l.Items[i].Slug == "flaky-ci" {
			l.Items[i].ApprovedBy = "alice"
			l.Items[i].State = landing.Reviewed
		}
	}
	return l
}

// "+" pressed between "✓ approved" and the merge pane's reread is not
// refused: it waits for the reading and then queues.
func TestKeyWaitsForTheRereadAfterAVerb(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, sampleListing)
	h.selectSlug("flaky-ci")
	*h.m.feed.req(feed.Merge) = refresh{} // the harness never brings the real reading
	// The approve dialog was confirmed; its outcome is in, the reread not.
	h.m.settle.acting = true
	h.update(answeredMsg{uictx.ActionMsg{Done: "approved flaky-ci"}})
	if !h.m.feed.req(feed.Merge).busy {
		t.Fatal("the verb's outcome did not read the merge queue again")
	}
	h.update(keyMsg("+"))
	if f := h.footer(); strings.Contains(f, "only approved candidates") {
		t.Fatalf("+ refused before the reread: %q", f)
	}
	if len(h.m.settle.held) != 1 {
		t.Fatalf("%d keys held, want 1", len(h.m.settle.held))
	}
	// A key after it waits too, in order.
	h.update(keyMsg("j"))
	if len(h.m.settle.held) != 2 || mergeOf(&h.m).Row().Slug != "flaky-ci" {
		t.Fatalf("j did not wait behind +: %d held, on %s", len(h.m.settle.held), mergeOf(&h.m).Row().Slug)
	}
	cmd := h.update(mergeMsg{listing: approvedListing(h.p)})
	if len(h.m.settle.held) != 0 || h.m.settle.busy() {
		t.Fatalf("still waiting after the reread: %+v", h.m.settle)
	}
	h.settle(cmd)
	if f := h.footer(); !strings.Contains(f, "queue add") {
		t.Errorf("+ did not run after the reread: %q", f)
	}
	if r := mergeOf(&h.m).Row(); r == nil || r.Slug == "flaky-ci" {
		t.Errorf("j did not move on after +")
	}
}

// A failed verb changed nothing: keys are refused at once as before.
func TestKeyAfterAFailedVerbIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, sampleListing)
	h.selectSlug("flaky-ci")
	h.m.settle.acting = true
	h.update(answeredMsg{uictx.ActionMsg{Err: errTest("approve: the tip moved")}})
	h.update(keyMsg("+"))
	if f := h.footer(); !strings.Contains(f, "only approved candidates") {
		t.Errorf("+ after a failed verb: %q", f)
	}
	if len(h.m.settle.held) != 0 {
		t.Errorf("%d keys held after a failed verb", len(h.m.settle.held))
	}
}

// A reread that never comes holds a key for settleWait at most.
func TestHeldKeyRunsWhenTheWaitRunsOut(t *testing.T) {
	t.Parallel()
	h := mergeHarness(t, 120, 36, sampleListing)
	h.selectSlug("flaky-ci")
	*h.m.feed.req(feed.Merge) = refresh{busy: true}
	h.update(answeredMsg{uictx.ActionMsg{Done: "approved flaky-ci"}})
	h.update(keyMsg("+"))
	if len(h.m.settle.held) != 1 {
		t.Fatalf("%d keys held, want 1", len(h.m.settle.held))
	}
	h.update(settleMsg{seq: h.m.settle.seq + 1}) // an old timeout's: ignored
	if len(h.m.settle.held) != 1 {
		t.Fatal("a stale timeout ran the held keys")
	}
	h.send(settleMsg{seq: h.m.settle.seq})
	if f := h.footer(); !strings.Contains(f, "only approved candidates") {
		t.Errorf("+ after the wait ran out: %q", f)
	}
	if h.m.settle.busy() {
		t.Error("still waiting after the timeout")
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }
