package landing

import (
	"testing"

	"github.com/fleetwatch/fleetwatch/planfs"
)

// queue run lands a short batch only once its oldest entry waited wait:,
// a full one or a hotfix at once.
func TestBatchDue(t *testing.T) {
	tr, slugs := benchProject(t, 6, "checks:\n  - {name: test, run: [sh, -c, 'true']}\nqueue: {batch: 4, wait: 1h}\n")
	if !batchDue(tr) {
		t.Error("an empty queue is due (land says so)")
	}
	approveAndQueue(t, tr, slugs[:2])
	if batchDue(tr) {
		t.Error("2 of 4, queued just now, are due")
	}
	tip, err := git(tr.Project, "rev-parse", "feature/"+slugs[5])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.WriteApproval(slugs[5], tip, planfs.Agent("operator-bench")); err != nil {
		t.Fatal(err)
	}
	if err := AddHotfix(tr, slugs[5], "operator-bench"); err != nil {
		t.Fatal(err)
	}
	if !batchDue(tr) {
		t.Error("a hotfix is not due at once")
	}
	if err := Remove(tr, slugs[5]); err != nil {
		t.Fatal(err)
	}
	approveAndQueue(t, tr, slugs[2:4])
	if !batchDue(tr) {
		t.Error("a full batch is not due")
	}
}
