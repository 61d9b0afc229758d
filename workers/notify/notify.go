// Package notify sends notices where a person will see them when they are
// not looking at a cockpit: webhooks (a JSON body, or Slack's {"text"}),
// the terminal's own notification (OSC 777 / OSC 9) and notify-send. Each
// notice goes once to each target that takes its kind, by its ID, across
// restarts and across every cockpit and watcher of the project (the
// record, record.go); at most per_minute messages a minute each; never
// holding up the caller: each target has its own goroutine and a bounded
// queue.
package notify

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// Options are what a notifier needs of the process it runs in.
type Options struct {
	// Project names the project in messages; default the root's base name.
	Project string
	// Host names this machine in messages; default os.Hostname.
	Host string
	// Term is the terminal the terminal target writes to: the cockpit's,
	// or the watcher's when it is one; nil when there is none.
	Term io.Writer
	// Tmux wraps terminal notifications for tmux's passthrough.
	Tmux bool
	// Log gets one line for each message that failed and for each target
	// that cannot deliver here (said once); nil discards them.
	Log io.Writer
	// Backoff is the wait before the first retry, doubling after;
	// default a second.
	Backoff time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Ledger, when the project's claims are remote, is where a webhook's
	// notices are claimed across machines (ledger.go): the cockpits and
	// watchers of every machine post each notice to a shared hook once.
	// nil: once per machine.
	Ledger claims.NoticeLedger
	// Settings, when set, reads the notify: settings again: a started
	// notifier looks every SettingsEvery (default 2s) and, when they
	// changed, sends to the new targets from then on (settings.go).
	Settings      func() (config.Notify, error)
	SettingsEvery time.Duration
	// Current, when set, is every notice true now: a notice no longer
	// among them when its turn to be sent comes is dropped unsent (a
	// review notice for a plan landed meanwhile). nil sends what waits.
	Current func() ([]model.Notice, error)
}

// tries bounds the tries of one message.
const tries = 3

// queued bounds each target's queue of offers: a full one drops the
// offer, which the next look offers again (a fact that stays true does).
const queued = 16

// pendingMax bounds the notices that wait over a target's rate; beyond
// it the oldest are dropped (the summary says how many there were).
const pendingMax = 1000

// Notifier sends the notices it is offered to its targets.
type Notifier struct {
	project string
	opt     Options
	rec     *record
	// mu guards targets, queues and conf: the settings may swap them
	// while faces offer.
	mu      sync.RWMutex
	targets []*target
	queues  []chan []model.Notice
	conf    config.Notify
	stop    chan struct{} // closed by Close: the settings loop ends
	looking sync.WaitGroup
	curMu   sync.Mutex // one Current at a time
	seq     atomic.Int64
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
	logMu   sync.Mutex
	said    map[string]bool // the targets whose absence was said
}

// New makes a notifier for project's targets in c; Start begins sending.
func New(project string, c config.Notify, opt Options) *Notifier {
	if opt.Project == "" {
		opt.Project = filepath.Base(project)
	}
	if opt.Host == "" {
		opt.Host, _ = os.Hostname()
	}
	if opt.Backoff == 0 {
		opt.Backoff = time.Second
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	n := &Notifier{project: project, opt: opt, rec: newRecord(project), said: map[string]bool{}, stop: make(chan struct{})}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	n.targets, n.conf = n.targetsOf(c), c
	return n
}

// targetsOf makes a target of each of c's.
func (n *Notifier) targetsOf(c config.Notify) []*target {
	var out []*target
	for _, w := range c.Webhooks {
		out = append(out, n.webhook(w))
	}
	if c.Terminal != nil {
		out = append(out, n.terminal(c.Terminal))
	}
	if c.Desktop != nil {
		out = append(out, n.desktop(c.Desktop))
	}
	return out
}

// Targets names the notifier's targets.
func (n *Notifier) Targets() []string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	out := make([]string, len(n.targets))
	for i, t := range n.targets {
		out[i] = t.name
	}
	return out
}

// Start starts one goroutine per target, and with Options.Settings the
// one that follows the settings.
func (n *Notifier) Start() {
	n.mu.Lock()
	n.queues = n.startAll(n.targets)
	n.mu.Unlock()
	if n.opt.Settings != nil {
		n.looking.Add(1)
		go n.followSettings()
	}
}

// startAll starts a goroutine for each of ts and returns their queues.
func (n *Notifier) startAll(ts []*target) []chan []model.Notice {
	qs := make([]chan []model.Notice, len(ts))
	for i, t := range ts {
		qs[i] = make(chan []model.Notice, queued)
		n.wg.Add(1)
		go n.run(t, qs[i])
	}
	return qs
}

// Offer hands every notice true now to each target; it never blocks.
// Offering the same notices again is cheap: what was claimed is dropped
// before any lock is taken.
func (n *Notifier) Offer(ns []model.Notice) {
	if n == nil || len(ns) == 0 {
		return
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	for _, q := range n.queues {
		select {
		case q <- ns:
		default: // full: the next look offers them again
		}
	}
}

// Close sends what was offered and stops; sends still going after wait
// are cut short (and recorded failed).
func (n *Notifier) Close(wait time.Duration) {
	if n == nil {
		return
	}
	n.once.Do(func() {
		close(n.stop)
		n.looking.Wait()
		n.mu.Lock()
		for _, q := range n.queues {
			close(q)
		}
		n.queues = nil
		n.mu.Unlock()
		done := make(chan struct{})
		go func() { n.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(wait):
			n.cancel()
			<-done
		}
		n.cancel()
	})
}

// run is target t's goroutine: it keeps the notices that wait for t and
// sends what the rate lets through, waking when the rate frees a slot.
func (n *Notifier) run(t *target, q <-chan []model.Notice) {
	defer n.wg.Done()
	var pending []model.Notice
	var wake <-chan time.Time
	for {
		select {
		case ns, ok := <-q:
			if !ok {
				n.flush(t, pending)
				return
			}
			had := len(pending)
			// Only news is worth the lock: what already waits, waits
			// for the rate's wake.
			if pending = n.keep(t, pending, ns); len(pending) == had {
				continue
			}
		case <-wake:
		}
		wake = nil
		if len(pending) == 0 {
			continue
		}
		var again time.Duration
		pending, again = n.flush(t, pending)
		if again > 0 {
			wake = time.After(again)
		}
	}
}

// keep adds to pending the notices of ns t takes that are neither claimed
// nor waiting already.
func (n *Notifier) keep(t *target, pending, ns []model.Notice) []model.Notice {
	waiting := make(map[string]bool, len(pending))
	for _, p := range pending {
		waiting[p.ID] = true
	}
	// Without the file's lock: claim decides under it.
	n.rec.mu.Lock()
	sent := n.rec.claimed[t.name]
	for _, x := range ns {
		if t.takes(x.Kind) && !waiting[x.ID] && !sent[idKey(x.ID)] {
			waiting[x.ID] = true
			pending = append(pending, x)
		}
	}
	n.rec.mu.Unlock()
	if len(pending) > pendingMax {
		pending = pending[len(pending)-pendingMax:]
	}
	return pending
}

// flush claims what t's rate allows of pending and sends it; it returns
// what still waits and when to try again.
func (n *Notifier) flush(t *target, pending []model.Notice) ([]model.Notice, time.Duration) {
	if why := t.absent(); why != "" {
		n.sayOnce(t.name, why)
		return nil, 0
	}
	pending = n.stillTrue(pending)
	// One message claimed at a time, each sent before the next is
	// claimed: cut short by Close, the rest stay unclaimed, for the next
	// process, not recorded failed unsent.
	for n.ctx.Err() == nil {
		msgs, rest, again, err := n.claim(t, pending)
		if err != nil {
			n.say("%s: %v", t.name, err)
			return nil, 0
		}
		if len(msgs) == 0 {
			return rest, again
		}
		if c, ok := n.claimShared(t, msgs[0]); ok {
			if n.deliver(t, c.claimed).State == Sent {
				n.confirmShared(t, c.mine)
			}
		}
		pending = rest
	}
	return nil, 0
}

// claim takes the record, drops what another process claimed, and claims
// one message if the rate has a free slot: one notice, except in the last
// free slot, which sums up all that wait when more than one does.
func (n *Notifier) claim(t *target, pending []model.Notice) (msgs []claimed, rest []model.Notice, again time.Duration, err error) {
	release, err := n.rec.hold()
	if err != nil {
		return nil, nil, 0, err
	}
	defer release()
	fresh := pending[:0:0]
	for _, p := range pending {
		if !n.rec.claimed[t.name][idKey(p.ID)] {
			fresh = append(fresh, p)
		}
	}
	now := n.opt.Now()
	count, first := n.rec.recent(t.name, now.Add(-time.Minute), now)
	slots := t.perMinute - count
	var lines []Line
	if slots > 0 && len(fresh) > 0 {
		take := 1
		if slots == 1 {
			take = len(fresh)
		}
		m := n.message(fresh[:take])
		c := claimed{message: m, msg: n.msgName(), notices: slices.Clone(fresh[:take])}
		msgs = append(msgs, c)
		lines = append(lines, Line{At: now, To: t.name, State: Claimed, Msg: c.msg, IDs: m.IDs, Kind: m.Kind, Text: m.Text})
		fresh = fresh[take:]
	}
	if err := n.rec.add(lines...); err != nil {
		return nil, nil, 0, err
	}
	if len(fresh) > 0 {
		if first.IsZero() {
			first = now
		}
		again = max(time.Second, first.Add(time.Minute).Sub(now))
	}
	return msgs, fresh, again, nil
}

// claimed is a message claimed in the record under msg, and the notices
// it carries.
type claimed struct {
	message
	msg     string
	notices []model.Notice
}

func (n *Notifier) msgName() string {
	return n.opt.Host + ":" + strconv.Itoa(os.Getpid()) + ":" + strconv.FormatInt(n.seq.Add(1), 10)
}

// message is one notice, or a summary of several: "3 notices: …".
func (n *Notifier) message(ns []model.Notice) message {
	m := message{Kind: string(ns[0].Kind), Text: ns[0].Text, Subject: ns[0].Key, At: time.Unix(int64(ns[0].At), 0)}
	for _, x := range ns {
		m.IDs = append(m.IDs, x.ID)
	}
	if len(ns) == 1 {
		return m
	}
	const listed = 5
	texts := make([]string, 0, listed)
	for _, x := range ns[:min(listed, len(ns))] {
		texts = append(texts, string(x.Kind)+": "+x.Text)
	}
	m.Kind, m.Subject, m.At = "summary", "", n.opt.Now()
	m.Text = strconv.Itoa(len(ns)) + " notices: " + strings.Join(texts, "; ")
	if len(ns) > listed {
		m.Text += "; and " + strconv.Itoa(len(ns)-listed) + " more"
	}
	return m
}

// deliver sends m, retrying what may work later, and records how it went.
func (n *Notifier) deliver(t *target, c claimed) Line {
	var err error
	try := 1
	for ; ; try++ {
		var retry bool
		retry, err = t.send(n.ctx, c.message)
		if err == nil || !retry || try == tries || n.wait(try) != nil {
			break
		}
	}
	l := Line{At: n.opt.Now(), To: t.name, State: Sent, Msg: c.msg, Tries: try}
	if err != nil {
		l.State, l.Error = Failed, err.Error()
		n.say("%s: %s not sent after %d tries: %v", t.name, c.Kind, try, err)
	}
	release, herr := n.rec.hold()
	if herr != nil {
		n.say("%s: %v", t.name, herr)
		return l
	}
	defer release()
	if aerr := n.rec.add(l); aerr != nil {
		n.say("%s: %v", t.name, aerr)
	}
	return l
}

// wait sleeps before try's retry: Backoff, doubling; an error when the
// notifier is cut short meanwhile.
func (n *Notifier) wait(try int) error {
	select {
	case <-time.After(n.opt.Backoff << (try - 1)):
		return nil
	case <-n.ctx.Done():
		return n.ctx.Err()
	}
}

func (n *Notifier) say(format string, args ...any) {
	n.logMu.Lock()
	defer n.logMu.Unlock()
	fmt.Fprintln(n.opt.Log, "notify: "+termtext.Line(fmt.Sprintf(format, args...)))
}

// sayOnce says why a target cannot deliver here, once per target.
func (n *Notifier) sayOnce(target, why string) {
	n.logMu.Lock()
	done := n.said[target]
	n.said[target] = true
	n.logMu.Unlock()
	if !done {
		n.say("%s: %s; its notices are left to a face that can send them", target, why)
	}
}
