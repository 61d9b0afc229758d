package notify

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/model"
)

// hook is a real HTTP server on loopback that keeps every request's body
// and answers with the codes in answers, then 200.
type hook struct {
	srv     *httptest.Server
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	answers []int
}

func newHook(t *testing.T, answers ...int) *hook {
	h := &hook{answers: answers}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(data, &body)
		h.mu.Lock()
		h.bodies = append(h.bodies, body)
		h.headers = append(h.headers, r.Header.Clone())
		code := 200
		if len(h.answers) > 0 {
			code, h.answers = h.answers[0], h.answers[1:]
		}
		h.mu.Unlock()
		w.WriteHeader(code)
		io.WriteString(w, "no such hook\nsecond line")
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) got() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.bodies)
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func notice(id string, k model.NoticeKind) model.Notice {
	return model.Notice{ID: string(k) + ":" + id, At: 1000, Kind: k, Text: id + " needs you", Key: id}
}

func start(project string, c config.Notify, opt Options) *Notifier {
	if opt.Backoff == 0 {
		opt.Backoff = 10 * time.Millisecond
	}
	opt.Project, opt.Host = "demo", "box"
	n := New(project, c, opt)
	n.Start()
	return n
}

func webhookConf(url string, per int, kinds ...string) config.Notify {
	return config.Notify{Webhooks: []config.Webhook{{Name: "team", URL: url, Format: "json", Target: config.Target{PerMinute: per, Kinds: kinds},
		Headers: map[string]string{"Authorization": "Bearer s3cret"}}}}
}

func ids(bodies []map[string]any) []string {
	var out []string
	for _, b := range bodies {
		out = append(out, b["id"].(string))
	}
	slices.Sort(out)
	return out
}

// Each notice goes once: offered again, by a second notifier over the
// same project racing the first, or after a restart, it is not sent again.
func TestEachNoticeOnceAcrossNotifiersAndRestarts(t *testing.T) {
	h := newHook(t)
	project := t.TempDir()
	c := webhookConf(h.srv.URL, 100)
	var ns []model.Notice
	for _, id := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		ns = append(ns, notice(id, model.NoticeReview))
	}
	a, b := start(project, c, Options{}), start(project, c, Options{})
	var wg sync.WaitGroup
	for _, n := range []*Notifier{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); n.Offer(ns); n.Offer(ns) }()
	}
	wg.Wait()
	a.Close(5 * time.Second)
	b.Close(5 * time.Second)
	got := h.got()
	if len(got) != len(ns) {
		t.Fatalf("%d requests for %d notices: %v", len(got), len(ns), ids(got))
	}
	want := []string{}
	for _, n := range ns {
		want = append(want, n.ID)
	}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("ids %v, want %v", ids(got), want)
	}
	body, head := got[0], h.headers[0]
	if body["kind"] != "review" || body["project"] != "demo" || body["host"] != "box" || body["at"] != "1970-01-01T00:16:40Z" ||
		!strings.HasSuffix(body["text"].(string), " needs you") || head.Get("Authorization") != "Bearer s3cret" || head.Get("Content-Type") != "application/json" {
		t.Errorf("body %v, headers %v", body, head)
	}
	// A restart: a new notifier reads the record and sends nothing again,
	// but a new notice still goes.
	r := start(project, c, Options{})
	r.Offer(append(ns, notice("new", model.NoticeWorkerFailed)))
	r.Close(5 * time.Second)
	if got := h.got(); len(got) != len(ns)+1 || got[len(got)-1]["id"] != "failed:new" {
		t.Fatalf("after a restart: %v", ids(got))
	}
	lines, err := ReadRecord(project)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	for _, l := range lines {
		states[l.State]++
	}
	if states[Claimed] != len(ns)+1 || states[Sent] != len(ns)+1 || states[Failed] != 0 {
		t.Errorf("record states %v", states)
	}
}

// At most per_minute messages a minute, counted from the record: over it,
// the last slot sums up what waits, and the rest waits for the minute.
func TestRateLimitHoldsAndSummarizes(t *testing.T) {
	h := newHook(t)
	project := t.TempDir()
	var mu sync.Mutex
	now := time.Unix(5000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := webhookConf(h.srv.URL, 2)
	n := start(project, c, Options{Now: clock})
	var ns []model.Notice
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		ns = append(ns, notice(id, model.NoticeReview))
	}
	n.Offer(ns)
	waitFor(t, "two messages", func() bool { return len(h.got()) == 2 })
	// A second notifier (another process) is held to the same rate.
	other := start(project, c, Options{Now: clock})
	other.Offer([]model.Notice{notice("late", model.NoticeWorkerDead)})
	time.Sleep(200 * time.Millisecond)
	got := h.got()
	if len(got) != 2 {
		t.Fatalf("over the rate: %d messages", len(got))
	}
	if got[0]["id"] != "review:a" || got[1]["kind"] != "summary" || !strings.HasPrefix(got[1]["text"].(string), "4 notices: review: b needs you; ") ||
		len(got[1]["ids"].([]any)) != 4 {
		t.Errorf("messages %v", got)
	}
	// A minute on, the waiting one goes with the next news.
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	other.Offer([]model.Notice{notice("later", model.NoticeWorkerDead)})
	waitFor(t, "the waiting notices", func() bool { return len(h.got()) == 4 })
	if got := h.got(); got[2]["id"] != "dead:late" || got[3]["id"] != "dead:later" {
		t.Errorf("messages after the minute %v", got[2:])
	}
	n.Close(time.Second)
	other.Close(time.Second)
}

// A 5xx is tried again and the retry's success recorded; a 4xx is not
// tried again and its failure recorded with the status.
func TestRetriesAfter5xxNotAfter4xx(t *testing.T) {
	h := newHook(t, 500, 503)
	project := t.TempDir()
	n := start(project, webhookConf(h.srv.URL, 10), Options{})
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	n.Close(5 * time.Second)
	if len(h.got()) != 3 {
		t.Fatalf("%d tries after two 5xx", len(h.got()))
	}
	lines, _ := ReadRecord(project)
	if last := lines[len(lines)-1]; last.State != Sent || last.Tries != 3 {
		t.Errorf("record %+v", last)
	}

	h4 := newHook(t, 404, 404)
	project = t.TempDir()
	var log testkit.LockedBuffer
	n = start(project, webhookConf(h4.srv.URL, 10), Options{Log: &log})
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	n.Close(5 * time.Second)
	if len(h4.got()) != 1 {
		t.Fatalf("%d tries after a 404", len(h4.got()))
	}
	lines, _ = ReadRecord(project)
	if last := lines[len(lines)-1]; last.State != Failed || last.Tries != 1 || last.Error != "HTTP 404: no such hook" {
		t.Errorf("record %+v", last)
	}
	if !strings.Contains(log.String(), "notify: team: review not sent after 1 tries: HTTP 404") || strings.Contains(log.String(), "s3cret") {
		t.Errorf("log %q", log.String())
	}
	// An address nothing listens on is a network error, tried 3 times.
	project = t.TempDir()
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	n = start(project, webhookConf(dead.URL, 10), Options{})
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	n.Close(5 * time.Second)
	lines, _ = ReadRecord(project)
	if last := lines[len(lines)-1]; last.State != Failed || last.Tries != 3 || !strings.Contains(last.Error, "refused") {
		t.Errorf("record %+v", last)
	}
}

// format: slack is {"text": …}; kinds: keeps the others out.
func TestSlackFormatAndKinds(t *testing.T) {
	h := newHook(t)
	project := t.TempDir()
	c := webhookConf(h.srv.URL, 10, "budget")
	c.Webhooks[0].Format = "slack"
	n := start(project, c, Options{})
	n.Offer([]model.Notice{notice("a", model.NoticeReview), notice("w1", model.NoticeBudget)})
	n.Close(5 * time.Second)
	got := h.got()
	if len(got) != 1 || len(got[0]) != 1 || got[0]["text"] != "fleetwatch · demo: w1 needs you" {
		t.Fatalf("bodies %v", got)
	}
}

// The terminal gets OSC 777 and OSC 9, made safe, wrapped for tmux inside
// tmux; with no terminal, the target claims nothing (and says so once).
func TestTerminalNotification(t *testing.T) {
	project := t.TempDir()
	var term testkit.LockedBuffer
	c := config.Notify{Terminal: &config.TerminalTarget{OSC777: true, OSC9: true}}
	n := start(project, c, Options{Term: &term})
	x := notice("a", model.NoticeReview)
	x.Text = "a\x1b]0;evil\a waits"
	n.Offer([]model.Notice{x})
	n.Close(5 * time.Second)
	want := "\x1b]777;notify;fleetwatch · demo;a?]0;evil? waits\a\x1b]9;fleetwatch · demo: a?]0;evil? waits\a"
	if term.String() != want {
		t.Errorf("terminal got %q\nwant %q", term.String(), want)
	}
	var long testkit.LockedBuffer
	x = notice("long", model.NoticeReview)
	x.Text = strings.Repeat("é", 5000)
	n = start(t.TempDir(), config.Notify{Terminal: &config.TerminalTarget{OSC9: true}}, Options{Term: &long})
	n.Offer([]model.Notice{x})
	n.Close(5 * time.Second)
	if got := long.String(); utf8.RuneCountInString(got) > oscBody+40 || !strings.HasSuffix(got, "é…\a") {
		t.Errorf("a long notice's OSC 9 is %d characters: %.60q…", utf8.RuneCountInString(got), got)
	}
	if got := wrapTmux("\x1b]9;x\a", true); got != "\x1bPtmux;\x1b\x1b]9;x\a\x1b\\" {
		t.Errorf("tmux wrap %q", got)
	}
	project = t.TempDir()
	var log testkit.LockedBuffer
	n = start(project, c, Options{Log: &log})
	n.Offer([]model.Notice{x})
	n.Offer([]model.Notice{notice("b", model.NoticeReview)})
	n.Close(5 * time.Second)
	if lines, _ := ReadRecord(project); len(lines) != 0 {
		t.Errorf("a target that cannot deliver claimed %v", lines)
	}
	if strings.Count(log.String(), "no terminal here") != 1 {
		t.Errorf("log %q", log.String())
	}
}

// notify-send is run with the title and text as arguments, no shell.
func TestDesktopNotifySend(t *testing.T) {
	bin := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv")
	testkit.WriteScript(t, filepath.Join(bin, "notify-send"), "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> "+argv+"\n")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	project := t.TempDir()
	n := start(project, config.Notify{Desktop: &config.Target{}}, Options{})
	x := notice("a", model.NoticeReview)
	x.Text = "-x; $(rm -rf /)"
	n.Offer([]model.Notice{x})
	n.Close(5 * time.Second)
	got, _ := os.ReadFile(argv)
	if string(got) != "--app-name=fleetwatch\n--\nfleetwatch · demo\n-x; $(rm -rf /)\n" {
		t.Errorf("argv %q", got)
	}
	t.Setenv("PATH", t.TempDir())
	res, err := New(project, config.Notify{Desktop: &config.Target{}}, Options{}).Test("")
	if err != nil || len(res) != 1 || res[0].Err == nil || res[0].Err.Error() != "notify-send is not installed" {
		t.Errorf("without notify-send: %+v %v", res, err)
	}
}

// notify test sends at once, past the queue, and says per target.
func TestTestSendsToEachTarget(t *testing.T) {
	ok, bad := newHook(t), newHook(t, 403)
	project := t.TempDir()
	c := config.Notify{Webhooks: []config.Webhook{{Name: "ok", URL: ok.srv.URL, Format: "json"}, {Name: "bad", URL: bad.srv.URL, Format: "json"}}}
	n := New(project, c, Options{Project: "demo", Host: "box"})
	res, err := n.Test("")
	if err != nil || len(res) != 2 || res[0].Err != nil || res[0].Tries != 1 || res[1].Err == nil || !strings.HasPrefix(res[1].Err.Error(), "HTTP 403") {
		t.Fatalf("results %+v %v", res, err)
	}
	if got := ok.got(); len(got) != 1 || got[0]["kind"] != "test" {
		t.Errorf("test body %v", got)
	}
	if _, err := n.Test("nope"); err == nil || err.Error() != `no such target "nope" (targets: [ok bad])` {
		t.Errorf("unknown target: %v", err)
	}
}

// config's list of kinds is model's.
func TestConfigKindsAreModels(t *testing.T) {
	var want []string
	for _, k := range model.NoticeKinds {
		want = append(want, string(k))
	}
	if !slices.Equal(config.NoticeKinds, want) {
		t.Errorf("config %v, model %v", config.NoticeKinds, want)
	}
}

// The record is never reached through a symlink.
func TestRecordRefusesSymlink(t *testing.T) {
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, "var/fleet"), 0o755)
	os.Symlink(t.TempDir(), filepath.Join(project, "var/fleet/notify"))
	h := newHook(t)
	var log testkit.LockedBuffer
	n := start(project, webhookConf(h.srv.URL, 10), Options{Log: &log})
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	n.Close(5 * time.Second)
	if len(h.got()) != 0 || !strings.Contains(log.String(), "symlink") {
		t.Errorf("sent %d, log %q", len(h.got()), log.String())
	}
}

// A 429 (the hook's own rate) is tried again, as a 5xx is.
func TestRetriesAfter429(t *testing.T) {
	h := newHook(t, 429)
	project := t.TempDir()
	n := start(project, webhookConf(h.srv.URL, 10), Options{})
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	n.Close(5 * time.Second)
	lines, _ := ReadRecord(project)
	if len(h.got()) != 2 || lines[len(lines)-1].State != Sent {
		t.Fatalf("%d tries after a 429, record %+v", len(h.got()), lines)
	}
}

// Closing while a slow hook holds the first message cuts that one short,
// but claims none of the rest: they are not recorded failed unsent, and
// the next notifier sends them.
func TestCloseClaimsNothingItCannotSend(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = append(got, body["id"].(string))
		mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	project := t.TempDir()
	ns := []model.Notice{notice("a", model.NoticeReview), notice("b", model.NoticeReview), notice("c", model.NoticeReview)}
	n := start(project, webhookConf(srv.URL, 10), Options{})
	n.Offer(ns)
	waitFor(t, "the first request", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 1 })
	n.Close(100 * time.Millisecond)
	close(release)
	lines, _ := ReadRecord(project)
	claimed := 0
	for _, l := range lines {
		if l.State == Claimed {
			claimed++
		}
	}
	if claimed != 1 {
		t.Fatalf("%d claimed on Close, want the one under way: %+v", claimed, lines)
	}
	r := start(project, webhookConf(srv.URL, 10), Options{})
	r.Offer(ns)
	r.Close(5 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 {
		t.Errorf("requests %v, want each notice once", got)
	}
}

// A notify-send that leaves a child holding its output (a wrapper script
// that backgrounds its work) does not hold the target, nor Close, for as
// long as the child lives.
func TestDesktopChildHoldingOutput(t *testing.T) {
	bin := t.TempDir()
	testkit.WriteScript(t, filepath.Join(bin, "notify-send"), "#!/bin/sh\nsleep 60 &\nexit 0\n")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	project := t.TempDir()
	n := start(project, config.Notify{Desktop: &config.Target{}}, Options{})
	n.Offer([]model.Notice{notice("a", model.NoticeReview)})
	began := time.Now()
	n.Close(time.Second)
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if lines, _ := ReadRecord(project); len(lines) != 2 || lines[1].State != Sent {
		t.Errorf("record %+v", lines)
	}
}
