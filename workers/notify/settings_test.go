package notify

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
)

// project is a scaffolded project whose plans are rel → text, with no
// notify: settings of the tester's own.
func project(t *testing.T, plans map[string]string) string {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	if _, err := planfs.Scaffold(dir); err != nil {
		t.Fatal(err)
	}
	for rel, text := range plans {
		if err := os.WriteFile(filepath.Join(dir, planfs.Dir, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func settings(dir string) func() (config.Notify, error) {
	return func() (config.Notify, error) { return config.LoadNotify(dir) }
}

// A notifier started with no notify: section: once one naming a webhook
// is added to fleetwatch.yaml, the next notice goes to it, without a
// restart; changed again, the notices after go to the new one only.
func TestNewSettingsReachAStartedNotifier(t *testing.T) {
	dir := project(t, nil)
	first, second := newHook(t), newHook(t)
	n := start(dir, config.Notify{}, Options{Settings: settings(dir), SettingsEvery: 20 * time.Millisecond})
	defer n.Close(time.Second)
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	write := func(name, url string) {
		text := "notify:\n  webhooks:\n    - {name: " + name + ", url: " + url + ", format: json, per_minute: 100}\n"
		if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("team", first.srv.URL)
	waitFor(t, "the new target", func() bool { return slices.Equal(n.Targets(), []string{"team"}) })
	n.Offer([]model.Notice{notice("b", model.NoticeReview)})
	waitFor(t, "the notice at the new webhook", func() bool { return len(first.got()) == 1 })
	if got := ids(first.got()); !slices.Equal(got, []string{"review:b"}) {
		t.Errorf("the first webhook got %v", got)
	}
	write("ops", second.srv.URL)
	waitFor(t, "the second webhook's settings", func() bool { return slices.Equal(n.Targets(), []string{"ops"}) })
	n.Offer([]model.Notice{notice("c", model.NoticeReview)})
	waitFor(t, "the notice at the second webhook", func() bool { return len(second.got()) == 1 })
	if got := ids(second.got()); !slices.Equal(got, []string{"review:c"}) || len(first.got()) != 1 {
		t.Errorf("after the second change: first %v, second %v", ids(first.got()), got)
	}
}

// A settings file that stops parsing keeps the targets there were.
func TestBrokenSettingsKeepTheTargets(t *testing.T) {
	dir := project(t, nil)
	h := newHook(t)
	n := start(dir, webhookConf(h.srv.URL, 100), Options{Settings: settings(dir), SettingsEvery: 20 * time.Millisecond})
	defer n.Close(time.Second)
	if err := os.WriteFile(filepath.Join(dir, "fleetwatch.yaml"), []byte("notify:\n  webhooks:\n    - url: gopher://x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	waitFor(t, "the notice", func() bool { return len(h.got()) == 1 })
}

// A review notice offered for a plan landed since (now in completed/) is
// not sent when its turn comes; the one for a plan still waiting is.
func TestAStaleNoticeIsNotSent(t *testing.T) {
	plan := "# P\n\n## Goal\nDo it.\n\n## Done when\n- done\n"
	dir := project(t, map[string]string{"review-needed/waits.md": plan, "completed/landed.md": plan})
	tr, err := planfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := newHook(t)
	n := start(dir, webhookConf(h.srv.URL, 100), Options{Current: Current(tr, nil, 0)})
	stale := model.Notice{ID: "review:review-needed/landed.md", At: 1000, Kind: model.NoticeReview, Text: "landed waits for review", Key: "review-needed/landed.md"}
	fresh := model.Notice{ID: "review:review-needed/waits.md", At: 1000, Kind: model.NoticeReview, Text: "waits waits for review", Key: "review-needed/waits.md"}
	n.Offer([]model.Notice{stale, fresh})
	waitFor(t, "the notice still true", func() bool { return len(h.got()) >= 1 })
	n.Close(time.Second)
	if got := ids(h.got()); !slices.Equal(got, []string{fresh.ID}) {
		t.Errorf("sent %v, want only %s", got, fresh.ID)
	}
}
