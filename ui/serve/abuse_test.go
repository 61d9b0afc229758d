package serve_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
	"github.com/fleetwatch/fleetwatch/ui/serve"
)

// procCounts is what a leaked session shows in: descriptors, the PTY
// masters among them, goroutines and threads. The tests that count them,
// or wait for no PTY at all, are not parallel: the parallel ones (each
// with a server of its own, mostly waiting on timers) run only after
// every sequential test is done.
type procCounts struct{ fds, ptmx, goroutines, threads int }

func counts(t testing.TB) procCounts {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	c := procCounts{fds: len(ents), goroutines: runtime.NumGoroutine()}
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l == "/dev/ptmx" {
			c.ptmx++
		}
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "Threads:"); ok {
			c.threads, _ = strconv.Atoi(strings.TrimSpace(rest))
		}
	}
	return c
}

// waitPTYs waits until the process holds want PTY masters, at most limit.
func waitPTYs(t testing.TB, want int, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for counts(t).ptmx != want {
		if time.Since(start) > limit {
			t.Fatalf("after %v the process holds %d /dev/ptmx, want %d", limit, counts(t).ptmx, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// One session's PTY is gone within a second of its end, by q and by the
// client's connection dropping.
func TestSessionPTYFreedWithinASecond(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	base := counts(t).ptmx
	tm := s.openTerm(t, 100, 30, alice)
	tm.waitFor(10*time.Second, 0, "crash")
	waitPTYs(t, base+1, time.Second)
	tm.send("q")
	if err := waitSession(tm.sess, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("q: the PTY was freed %v after the client saw the session end", waitPTYs(t, base, time.Second))
	tm = s.openTerm(t, 100, 30, alice)
	tm.waitFor(10*time.Second, 0, "crash")
	tm.c.Close()
	t.Logf("disconnect: the PTY was freed after %v", waitPTYs(t, base, time.Second))
}

func waitSession(sess *gossh.Session, limit time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	select {
	case <-done:
		return nil
	case <-time.After(limit):
		return fmt.Errorf("the session was still open %v later", limit)
	}
}

// sessionOnce is one cockpit session, ended by q or by dropping the
// connection; safe to run from any goroutine.
func sessionOnce(addr string, k key, byQ bool) error {
	cfg := &gossh.ClientConfig{User: "anyone", Auth: []gossh.AuthMethod{gossh.PublicKeys(k.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 10 * time.Second}
	c, err := gossh.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		return err
	}
	tm := &term{c: c, sess: sess, out: &syncBuf{}}
	if tm.in, err = sess.StdinPipe(); err != nil {
		return err
	}
	sess.Stdout = &answering{tm: tm}
	if err := sess.RequestPty("xterm-256color", 24, 80, gossh.TerminalModes{}); err != nil {
		return err
	}
	if err := sess.Shell(); err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(tm.text(), "crash") {
		if time.Now().After(deadline) {
			return fmt.Errorf("no board after 30s: %q", lastChars(tm.out.String(), 300))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !byQ {
		return c.Close()
	}
	if _, err := io.WriteString(tm.in, "q"); err != nil {
		return err
	}
	return waitSession(sess, 10*time.Second)
}

// 500 sessions, half ended by q and half by the client dropping its
// connection: the descriptors, PTYs, goroutines and threads are back at
// what they were before.
func TestFiveHundredSessionsLeakNothing(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	// One of each first: what starts once (the hub's readers, caches) is in the baseline.
	for _, byQ := range []bool{true, false} {
		if err := sessionOnce(s.addr, alice, byQ); err != nil {
			t.Fatal(err)
		}
	}
	waitPTYs(t, 0, 2*time.Second)
	time.Sleep(200 * time.Millisecond)
	base := counts(t)
	const n, parallel = 500, 10
	var failed atomic.Int32
	var firstErr sync.Once
	var wg sync.WaitGroup
	next := make(chan int)
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := sessionOnce(s.addr, alice, i%2 == 0); err != nil {
					failed.Add(1)
					firstErr.Do(func() { t.Errorf("session %d: %v", i, err) })
				}
			}
		}()
	}
	start := time.Now()
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	t.Logf("%d sessions in %v, %d failed", n, time.Since(start), failed.Load())
	deadline := time.Now().Add(5 * time.Second)
	c := counts(t)
	// The runtime keeps the threads it started (parked, not exited), so
	// threads may grow with the sessions open at once (each one's master
	// is read in a blocking call), never with their number: the leak was
	// two blocked threads per session, 1000 here.
	for c.ptmx > 0 || c.fds > base.fds+4 || c.goroutines > base.goroutines+10 || c.threads > base.threads+60 {
		if time.Now().After(deadline) {
			t.Fatalf("after %d sessions: %+v, before them %+v", n, c, base)
		}
		time.Sleep(50 * time.Millisecond)
		c = counts(t)
	}
	t.Logf("before %+v, after %+v", base, c)
}

// A 20000×20000 terminal is drawn at 1000 columns, the most serve lays
// out, and so is a window change to that size; the heap stays far under
// 200 MB.
func TestHugeWindowIsClamped(t *testing.T) {
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(25 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	tm := s.openTerm(t, 20000, 20000, alice)
	tm.waitFor(10*time.Second, 0, "crash")
	waitLineOf(t, tm, 0, 1000)
	n := tm.out.Len()
	if err := tm.sess.WindowChange(30, 140); err != nil {
		t.Fatal(err)
	}
	waitLineOf(t, tm, n, 140)
	n = tm.out.Len()
	if err := tm.sess.WindowChange(20000, 20000); err != nil {
		t.Fatal(err)
	}
	waitLineOf(t, tm, n, 1000)
	time.Sleep(500 * time.Millisecond)
	if w := drawnWidest(tm, 0); w > 1000 {
		t.Errorf("a line %d cells wide was drawn", w)
	}
	close(stop)
	<-sampled
	grew := (int64(peak.Load()) - int64(base)) >> 20
	t.Logf("heap: %d MB before, at most %d MB more during the session", base>>20, grew)
	if grew > 200 {
		t.Errorf("the heap grew by %d MB for one huge window", grew)
	}
}

// waitLineOf waits until a line want cells wide was drawn since from.
func waitLineOf(t *testing.T, tm *term, from, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !drawnWidths(tm, from)[want] {
		if time.Now().After(deadline) {
			t.Fatalf("no line %d wide was drawn; the widest is %d", want, drawnWidest(tm, 0))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cursorMove is a CSI sequence that moves the cursor or erases: a line
// drawn after one is another line.
var cursorMove = regexp.MustCompile(`\x1b\[[0-9;?]*[ABCDEFGHJKfhl]`)

// drawnWidths are the widths, in cells, of the lines sent since from.
func drawnWidths(tm *term, from int) map[int]bool {
	raw := tm.out.String()
	text := ansi.Strip(cursorMove.ReplaceAllString(raw[min(from, len(raw)):], "\n"))
	out := map[int]bool{}
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", "\n"), "\n") {
		out[len([]rune(l))] = true
	}
	return out
}

func drawnWidest(tm *term, from int) int {
	w := 0
	for n := range drawnWidths(tm, from) {
		w = max(w, n)
	}
	return w
}

// 10,000 environment variables: the first 64 are taken, the rest refused
// with an SSH refusal, and the session still answers; one 30 KB value is
// refused outright.
func TestEnvRequestsBounded(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	c, err := s.dial(t, alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	taken := 0
	for i := range 10000 {
		if sess.Setenv(fmt.Sprintf("V%d", i), "value") == nil {
			taken++
		}
	}
	if taken != 64 {
		t.Errorf("%d of 10,000 variables were taken, want 64", taken)
	}
	if out, err := sess.Output("board"); err != nil || !strings.Contains(string(out), "crash") {
		t.Errorf("after the refusals the session gives %v:\n%s", err, out)
	}
	big, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	if err := big.Setenv("BIG", strings.Repeat("x", 30<<10)); err == nil {
		t.Error("a 30 KB variable was taken")
	}
}

// 300 silent TCP connections do not keep an operator out, and each is
// closed by the server once the login deadline passes; so is one that
// trickles a byte at a time, never idle but never done.
func TestSilentConnectionsClosed(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil, func(o *serve.Options) {
		o.Limits.LoginTimeout, o.Limits.LoginIdle = 2*time.Second, time.Second
	})
	silent := make([]net.Conn, 300)
	for i := range silent {
		c, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		silent[i] = c
	}
	trickle, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer trickle.Close()
	go func() {
		for range 40 {
			if _, err := trickle.Write([]byte("S")); err != nil {
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	start := time.Now()
	c, err := s.dial(t, alice)
	if err != nil {
		t.Fatalf("with 300 silent connections open the operator is refused: %v", err)
	}
	sess, _ := c.NewSession()
	if out, err := sess.Output("board"); err != nil || !strings.Contains(string(out), "crash") {
		t.Errorf("the operator's board: %v\n%s", err, out)
	}
	c.Close()
	for i, conn := range append(silent, trickle) {
		_ = conn.SetReadDeadline(start.Add(15 * time.Second))
		if _, err := io.Copy(io.Discard, conn); err != nil {
			t.Fatalf("connection %d was not closed by the server: %v", i, err)
		}
	}
	t.Logf("all 301 closed %v after the operator logged in", time.Since(start))
}

// A key removed from the operators' file while its session is open: the
// screen says so and the session ends within 2 s; the key logs in no more.
func TestKeyRemovedMidSession(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice, bob := newKey(t, "", "alice@laptop"), newKey(t, "", "bob@desk")
	s := startServer(t, dir, []key{alice, bob}, nil)
	tm := s.openTerm(t, 100, 30, bob)
	tm.waitFor(10*time.Second, 0, "crash")
	n := tm.out.Len()
	writeKeys(t, s.opt.AuthorizedKeys, alice)
	start := time.Now()
	tm.waitFor(2*time.Second, n, "your key was removed")
	if err := waitSession(tm.sess, 2*time.Second-time.Since(start)); err != nil {
		t.Fatal(err)
	}
	t.Logf("closed %v after the file changed", time.Since(start))
	if c, err := s.dial(t, bob); err == nil {
		c.Close()
		t.Error("the removed key still logs in")
	}
}

// A key moved from the operators' file to the viewers' while its session
// is open: that session ends within 2 s, saying why, and the next one is
// read-only.
func TestKeyDemotedMidSession(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice, bob := newKey(t, "", "alice@laptop"), newKey(t, "", "bob@desk")
	s := startServer(t, dir, []key{alice, bob}, nil)
	tm := s.openTerm(t, 100, 30, bob)
	tm.waitFor(10*time.Second, 0, "crash")
	if strings.Contains(tm.text(), "read-only") {
		t.Fatal("an operator's session says read-only")
	}
	n := tm.out.Len()
	// The viewers' file first: a key in both is a viewer's.
	writeKeys(t, s.opt.Viewers, bob)
	writeKeys(t, s.opt.AuthorizedKeys, alice)
	start := time.Now()
	tm.waitFor(2*time.Second, n, "your key is now a viewer's")
	if err := waitSession(tm.sess, 2*time.Second-time.Since(start)); err != nil {
		t.Fatal(err)
	}
	t.Logf("closed %v after the files changed", time.Since(start))
	again := s.openTerm(t, 100, 30, bob)
	again.waitFor(10*time.Second, 0, "read-only", "crash")
}

// A session reaches the configured time limit: the screen says so and it ends.
func TestSessionLengthLimit(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t, fwtest.Plan{Rel: "bugs/crash.md", Fields: "Priority: P1; Preferred models: mid"})
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil, func(o *serve.Options) { o.Limits.SessionLength = 2 * time.Second })
	tm := s.openTerm(t, 100, 30, alice)
	tm.waitFor(10*time.Second, 0, "crash")
	tm.waitFor(5*time.Second, 0, "time limit")
	if err := waitSession(tm.sess, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Sessions per key and in all are bounded, refused with the reason.
func TestSessionLimits(t *testing.T) {
	t.Parallel()
	dir := fwtest.NewTree(t)
	alice, bob := newKey(t, "", "alice@laptop"), newKey(t, "", "bob@desk")
	s := startServer(t, dir, []key{alice, bob}, nil, func(o *serve.Options) {
		o.Limits.SessionsPerKey, o.Limits.Sessions = 2, 3
	})
	open := func(k key) (*gossh.Session, error) {
		c, err := s.dial(t, k)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c.NewSession()
	}
	a1, err1 := open(alice)
	_, err2 := open(alice)
	if err1 != nil || err2 != nil {
		t.Fatalf("two sessions: %v %v", err1, err2)
	}
	if _, err := open(alice); err == nil || !strings.Contains(err.Error(), "too many sessions for this key") {
		t.Errorf("a third session for one key: %v", err)
	}
	if _, err := open(bob); err != nil {
		t.Fatalf("bob's first: %v", err)
	}
	if _, err := open(bob); err == nil || !strings.Contains(err.Error(), "too many sessions on this server") {
		t.Errorf("a fourth session in all: %v", err)
	}
	a1.Close()
	fwtest.WaitFor(t, "a session again once one closed", 5*time.Second, func() bool {
		s, err := open(bob)
		if err == nil {
			s.Close()
		}
		return err == nil
	})
}

// Agent forwarding, X11 forwarding and port forwarding are refused.
func TestForwardingRefused(t *testing.T) {
	dir := fwtest.NewTree(t)
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	c, err := s.dial(t, alice)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := agent.RequestAgentForwarding(sess); err == nil {
		t.Error("agent forwarding was granted")
	}
	x11 := gossh.Marshal(struct {
		Single        bool
		Proto, Cookie string
		Screen        uint32
	}{false, "MIT-MAGIC-COOKIE-1", "00", 0})
	if ok, err := sess.SendRequest("x11-req", true, x11); ok || err != nil {
		t.Errorf("x11-req: %v %v", ok, err)
	}
	if conn, err := c.Dial("tcp", s.addr); err == nil {
		conn.Close()
		t.Error("a direct-tcpip channel was opened")
	}
	if ln, err := c.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
		t.Error("a remote port forward was granted")
	}
	if out, err := sess.Output("board"); err != nil {
		t.Errorf("the session after the refusals: %v %s", err, out)
	}
}

// What a client chose (its user name, TERM, command) reaches the log with
// its control characters made harmless: an OSC 52 clipboard write becomes text.
func TestClientTextSanitisedInLog(t *testing.T) {
	dir := fwtest.NewTree(t)
	alice := newKey(t, "", "alice@laptop")
	s := startServer(t, dir, []key{alice}, nil)
	cfg := &gossh.ClientConfig{User: "evil\x1b]52;c;cHduZWQ=\x07", Auth: []gossh.AuthMethod{gossh.PublicKeys(alice.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey(), Timeout: 5 * time.Second}
	c, err := gossh.Dial("tcp", s.addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, _ := c.NewSession()
	if err := sess.Run("board\x1b[2J\u009b31m"); err == nil {
		t.Error("an unknown command succeeded")
	}
	withPTY, _ := c.NewSession()
	if err := withPTY.RequestPty("xterm\x1b]0;title\x07", 24, 80, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	if err := withPTY.Shell(); err != nil {
		t.Fatal(err)
	}
	fwtest.WaitFor(t, "both sessions in the log", 5*time.Second, func() bool {
		return strings.Contains(s.log.String(), "session ended") && strings.Contains(s.log.String(), "title?")
	})
	log := s.log.String()
	if strings.ContainsAny(log, "\x1b\x07\u009b") {
		t.Errorf("a control character reached the log: %q", log)
	}
	if !strings.Contains(log, "evil?]52;c;cHduZWQ=?") {
		t.Errorf("the user name is not in the log as text: %q", log)
	}
}
