package landing

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/config"
)

// A batch with a failing change lands the rest in order and leaves the
// culprit queued as failed; the progress names the retry and bisection.
func TestLandBatchBisects(t *testing.T) {
	tr, slugs := benchProjectBad(t, 6, "checks:\n  - {name: t, run: [sh, -c, 'test ! -e bad']}\nqueue: {batch: 4}\n", 2)
	approveAndQueue(t, tr, slugs)
	var log bytes.Buffer
	l, err := Land(context.Background(), tr, LandOptions{Actor: "operator-test", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	var landed []string
	for _, one := range l.Batch {
		landed = append(landed, one.Slug)
	}
	if got := strings.Join(landed, " "); got != "c000 c001 c003 c004 c005" || strings.Join(l.Failed, " ") != "c002" {
		t.Errorf("landed %q, failed %v", got, l.Failed)
	}
	if !strings.Contains(log.String(), "retrying it once") || !strings.Contains(log.String(), "bisecting") {
		t.Errorf("progress:\n%s", log.String())
	}
	ls, err := List(tr.Project)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Items) == 0 || ls.Items[0].Slug != "c002" || ls.Items[0].State != Failed || ls.Batch != nil {
		t.Errorf("after the batch: %+v, next batch %+v", ls.Items, ls.Batch)
	}
	if _, err := Land(context.Background(), tr, LandOptions{Actor: "operator-test"}); err == nil || !strings.Contains(err.Error(), "c002") {
		t.Errorf("landing only the culprit: %v", err)
	}
}

// spread picks evenly spaced prefixes strictly inside the interval.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		lo, hi, n int
		want      string
	}{
		{0, 8, 3, "[2 4 6]"}, {2, 4, 3, "[3]"}, {0, 2, 3, "[1]"}, {0, 4, 3, "[1 2 3]"}, {3, 4, 3, "[]"},
	} {
		if got := fmt.Sprint(spread(c.lo, c.hi, c.n)); got != c.want {
			t.Errorf("spread(%d, %d, %d) = %s, want %s", c.lo, c.hi, c.n, got, c.want)
		}
	}
}

// A check with retries: 1 that fails, then passes, reads pass and flaky in
// the listing, with the failed attempt's log kept apart.
func TestFlakyPassListed(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "ran")
	tr, slugs := benchProject(t, 1, "sandbox: off\nchecks:\n  - {name: t, retries: 1, run: [sh, -c, 'test -f "+flag+" || { touch "+flag+"; exit 1; }']}\n")
	approveAndQueue(t, tr, slugs)
	l, err := List(tr.Project)
	if err != nil {
		t.Fatal(err)
	}
	st := l.Items[0]
	cand, err := buildCommit(tr.Project, l.Tip, st.Commit, st.Tree, st.Slug, st.Slug)
	if err != nil {
		t.Fatal(err)
	}
	s, err := config.Load(tr.Project)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RunChecks(context.Background(), tr.Project, s.Checks, cand, nil); err != nil {
		t.Fatal(err)
	}
	if l, err = List(tr.Project); err != nil {
		t.Fatal(err)
	}
	c := l.Items[0].Checks[0]
	if l.Items[0].State != Ready || c.Result != Pass || !c.Flaky || !strings.HasSuffix(c.FlakyLog, ".retry.log") {
		t.Errorf("a flaky pass lists as %s %+v", l.Items[0].State, c)
	}
	if _, err := os.Stat(c.FlakyLog); err != nil {
		t.Errorf("the failed attempt's log: %v", err)
	}
}
