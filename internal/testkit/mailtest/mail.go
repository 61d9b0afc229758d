// Package mailtest holds what every claims.Fleet must do with a person's
// messages to a running worker, as tests each backend's package runs
// against its real store (git remotes, an embedded etcd): delivery to the
// run they are for and no other, a full box refused, hostile lists
// bounded, racing senders all heard, and the time a message takes.
package mailtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
)

// World is one project's fleet as a backend's test sets it up.
type World struct {
	// Open is a new client of the fleet, standing for one more machine;
	// a worker one can publish (etcd: it holds a worker session).
	Open func(worker bool) claims.Fleet
	// Plant stores data as host's agent's pending mail, as a hostile or
	// broken writer could, past every check Send makes.
	Plant func(host, agent string, data []byte)
}

// Record is a running worker's record for run.
func Record(host, agent, run string) claims.WorkerRecord {
	now := float64(time.Now().UnixNano()) / 1e9
	return claims.WorkerRecord{AgentID: agent, Host: host, State: claims.WorkerRunning, Run: run,
		Started: now, Heartbeat: now, HeartbeatEvery: 1, TTL: 30, Note: "running"}
}

// Note is a note from op with an id of its own.
func Note(text string) claims.Message {
	return claims.Message{ID: claims.Nonce(), Kind: claims.MailTell, Text: text, By: "op", Host: "desk",
		At: float64(time.Now().UnixNano()) / 1e9}
}

func publish(t *testing.T, f claims.Fleet, rec claims.WorkerRecord) claims.Inbound {
	t.Helper()
	rec.Heartbeat = float64(time.Now().UnixNano()) / 1e9
	in, err := f.Publish(context.Background(), rec)
	if err != nil {
		t.Fatalf("publish %s: %v", rec.Run, err)
	}
	return in
}

// publishOn is publish for a goroutine of a test's own: a failure is an
// error of the test, but for a publish that lost every race to senders
// (the driver publishes again at its next heartbeat), which still gives
// what it heard. It counts those in lost.
func publishOn(t *testing.T, f claims.Fleet, rec claims.WorkerRecord, lost *atomic.Int64) claims.Inbound {
	rec.Heartbeat = float64(time.Now().UnixNano()) / 1e9
	in, err := f.Publish(context.Background(), rec)
	switch {
	case errors.Is(err, claims.ErrLost):
		lost.Add(1)
	case err != nil:
		t.Errorf("publish %s: %v", rec.Run, err)
	}
	return in
}

func ids(ms []claims.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// Delivery: a message comes back once, to the run it was sent to; a
// stop travels beside mail; a full box, a bad message, no worker and an
// exited one are refused.
func Delivery(t *testing.T, w World) {
	ctx := context.Background()
	worker, sender := w.Open(true), w.Open(false)
	rec := Record("h", "w", "run1")
	if in := publish(t, worker, rec); len(in.Mail) != 0 || in.Stop != nil {
		t.Fatalf("a first publish heard %+v", in)
	}
	m := Note("look at\n\tthe tests first")
	if err := sender.Send(ctx, "h", "w", m); err != nil {
		t.Fatal(err)
	}
	in := publish(t, worker, rec)
	if len(in.Mail) != 1 || in.Mail[0].ID != m.ID || in.Mail[0].Run != "run1" || in.Mail[0].Text != m.Text || in.Mail[0].By != "op" {
		t.Fatalf("publish after a send heard %+v", in.Mail)
	}
	if in := publish(t, worker, rec); len(in.Mail) != 0 {
		t.Fatalf("a message heard twice without a race: %+v", in.Mail)
	}
	for _, bad := range []claims.Message{{Kind: claims.MailTell, Text: "x", By: "op"}, {ID: "1", Kind: "shout", By: "op"},
		{ID: "1", Kind: claims.MailAnswer, By: "op", Option: "y"}, {ID: "1", Kind: claims.MailTell, By: "op", Text: " \n"}} {
		if err := sender.Send(ctx, "h", "w", bad); !errors.Is(err, claims.ErrBadMessage) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Send(%+v) = %v, want one line wrapping ErrBadMessage", bad, err)
		}
	}
	if err := sender.Send(ctx, "h9", "w", Note("x")); !errors.Is(err, claims.ErrNoWorker) {
		t.Fatalf("send to no worker: %v", err)
	}
	// Sent to run1; the agent's next run (same worker) never hears it.
	if err := sender.Send(ctx, "h", "w", Note("for run1")); err != nil {
		t.Fatal(err)
	}
	rec2 := Record("h", "w", "run2")
	for range 2 {
		if in := publish(t, worker, rec2); len(in.Mail) != 0 {
			t.Fatalf("run2 heard run1's message: %+v", in.Mail)
		}
	}
	// A stop travels beside mail, neither losing the other.
	a, b := Note("first"), Note("second")
	mustSend(t, sender, a)
	if err := sender.RequestStop(ctx, "h", "w", claims.StopRequest{By: "op", Host: "desk"}); err != nil {
		t.Fatal(err)
	}
	mustSend(t, sender, b)
	in = publish(t, worker, rec2)
	if in.Stop == nil || in.Stop.Run != "run2" || !slices.Equal(ids(in.Mail), []string{a.ID, b.ID}) {
		t.Fatalf("stop and mail: stop %+v, mail %v, want %v", in.Stop, ids(in.Mail), []string{a.ID, b.ID})
	}
	full(t, worker, sender, rec2)
	done := rec2
	done.State = claims.WorkerExited
	publish(t, worker, done)
	if err := sender.Send(ctx, "h", "w", Note("too late")); !errors.Is(err, claims.ErrWorkerDone) {
		t.Fatalf("send to an exited worker: %v", err)
	}
}

func mustSend(t *testing.T, f claims.Fleet, m claims.Message) {
	t.Helper()
	if err := f.Send(context.Background(), "h", "w", m); err != nil {
		t.Fatal(err)
	}
}

// full: MaxMail unread messages fill the box; the same message again is
// no new one; one more is refused until the worker reads them, in order.
func full(t *testing.T, worker, sender claims.Fleet, rec claims.WorkerRecord) {
	var sent []string
	for i := range claims.MaxMail {
		m := Note(fmt.Sprintf("note %d", i))
		mustSend(t, sender, m)
		sent = append(sent, m.ID)
	}
	first := Note("again")
	first.ID = sent[0]
	if err := sender.Send(context.Background(), "h", "w", first); err != nil {
		t.Fatalf("a message sent again while pending: %v", err)
	}
	err := sender.Send(context.Background(), "h", "w", Note("one too many"))
	if !errors.Is(err, claims.ErrMailFull) || !strings.Contains(err.Error(), "w on h") {
		t.Fatalf("a send to a full box: %v", err)
	}
	if in := publish(t, worker, rec); !slices.Equal(ids(in.Mail), sent) {
		t.Fatalf("a full box read as %v, want %v", ids(in.Mail), sent)
	}
	mustSend(t, sender, Note("room again"))
	if in := publish(t, worker, rec); len(in.Mail) != 1 {
		t.Fatalf("after the box was read, a send heard %d", len(in.Mail))
	}
}

// Hostile: a list planted past Send (a thousand messages, huge texts,
// controls, junk, more than MaxMailBox) is read bounded or said to be
// unreadable, and a Send replaces it.
func Hostile(t *testing.T, w World) {
	worker, sender := w.Open(true), w.Open(false)
	rec := Record("h", "w", "run1")
	publish(t, worker, rec)
	junk := hostileList(1000)
	data := claims.EncodeMail(junk)
	if len(data) > claims.MaxMailBox {
		t.Fatalf("the planted list is %d bytes, more than %d", len(data), claims.MaxMailBox)
	}
	w.Plant("h", "w", data)
	in := publish(t, worker, rec)
	if len(in.Mail) != claims.MaxMail || in.Problem != "" {
		t.Fatalf("a planted list of 1000 (500 good) read as %d messages (%q)", len(in.Mail), in.Problem)
	}
	for _, m := range in.Mail {
		checkBounded(t, m)
	}
	if len(in.Mail[0].Text) < claims.MaxMailText-8 {
		t.Fatalf("a long note came back as %d bytes, not cut at %d", len(in.Mail[0].Text), claims.MaxMailText)
	}
	huge := claims.EncodeMail(slices.Repeat(junk, 2))
	for _, data := range [][]byte{huge, []byte("{not json"), []byte(`[{"id":1}]`)} {
		w.Plant("h", "w", data)
		if in := publish(t, worker, rec); len(in.Mail) != 0 || in.Problem == "" || strings.Contains(in.Problem, "\n") || len(in.Problem) > 400 {
			t.Fatalf("a list of %d bytes read as %d messages, problem %q", len(data), len(in.Mail), in.Problem)
		}
		if in := publish(t, worker, rec); in.Problem != "" {
			t.Fatalf("an unreadable list was not replaced: %q", in.Problem)
		}
	}
	w.Plant("h", "w", huge)
	m := Note("after the junk")
	mustSend(t, sender, m)
	if in := publish(t, worker, rec); !slices.Equal(ids(in.Mail), []string{m.ID}) {
		t.Fatalf("a send over an unreadable list: %v %q", ids(in.Mail), in.Problem)
	}
}

// hostileList is n messages a hostile writer could plant: controls in
// every field, every 200th with a huge id, host and text; a quarter of an
// unknown kind, a quarter for another run.
func hostileList(n int) []claims.Message {
	var junk []claims.Message
	for i := range n {
		m := claims.Message{ID: fmt.Sprintf("%d\x1b[2J", i), Run: "run1", Kind: claims.MailTell,
			Text: "\x1b[31mred\x07\u202e\r\n\xff", By: "op\nnext", Host: "h\x9b"}
		switch {
		case i%200 == 0:
			m.ID += strings.Repeat("i", 300)
			m.Host = strings.Repeat("h", 500)
			m.Text = strings.Repeat("\x1b]0;pwned\x07\u202eline\r\n\x9b", 500)
		case i%4 == 1:
			m.Kind = "shout"
		case i%4 == 2:
			m.Run = "other"
		}
		junk = append(junk, m)
	}
	return junk
}

func checkBounded(t *testing.T, m claims.Message) {
	t.Helper()
	if len(m.Text) > claims.MaxMailText || len(m.ID) > 256 || len(m.Host) > 256 || m.Problem() != "" || m.Run != "run1" {
		t.Fatalf("a hostile message came back unbounded: %d bytes of text, id %d, host %d, %q", len(m.Text), len(m.ID), len(m.Host), m.Problem())
	}
	for _, s := range []string{m.ID, m.By, m.Host, m.Kind} {
		if strings.ContainsFunc(s, unicode.IsControl) || strings.ContainsRune(s, '\u202e') {
			t.Fatalf("a control character came back in %q", s)
		}
	}
	// The text keeps what Message.Bounded keeps (a bidi mark is not a
	// control character to it): a face prints it through termtext.
	if strings.ContainsFunc(m.Text, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }) || !utf8.ValidString(m.Text) {
		t.Fatalf("a control character came back in the text %q", m.Text[:min(60, len(m.Text))])
	}
}

// Race: senders on machines of their own send while the worker publishes
// every beat: every message sent is heard, each sender's in the order
// sent, none for another run; a repeat (at least once) is counted. It
// returns how many messages were heard again.
func Race(t *testing.T, w World, beat time.Duration, senders, each int) (repeats int) {
	worker := w.Open(true)
	rec := Record("h", "w", "run1")
	publish(t, worker, rec)
	var mu sync.Mutex
	heard := map[string]int{}
	var order []string
	stop := publishing(t, worker, rec, beat, nil, func(ms []claims.Message, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			if heard[m.ID]++; heard[m.ID] == 1 {
				order = append(order, m.ID)
			}
		}
	})
	sent := make([][]string, senders)
	var wg sync.WaitGroup
	for s := range senders {
		f := w.Open(false)
		wg.Go(func() {
			for i := range each {
				m := Note(fmt.Sprintf("sender %d note %d", s, i))
				if err := sendPatiently(f, m); err != nil {
					t.Errorf("sender %d: %v", s, err)
					return
				}
				sent[s] = append(sent[s], m.ID)
			}
		})
	}
	wg.Wait()
	all := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == senders*each
	}
	for end := time.Now().Add(30 * time.Second); !all() && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	for s, list := range sent {
		for i, id := range list {
			if _, ok := pos[id]; !ok {
				t.Errorf("sender %d's message %d was never heard", s, i)
			} else if i > 0 && pos[id] < pos[list[i-1]] {
				t.Errorf("sender %d's message %d was heard before its message %d", s, i, i-1)
			}
		}
	}
	if len(order) != len(pos) || len(order) > senders*each {
		t.Errorf("heard %d messages, %d distinct, %d sent", len(order), len(pos), senders*each)
	}
	for _, n := range heard {
		repeats += n - 1
	}
	return repeats
}

// publishing publishes rec as a driver does, every and at each poke, on a
// goroutine, and gives heard what each publish heard, until stop (at the
// latest when the test ends).
func publishing(t *testing.T, f claims.Fleet, rec claims.WorkerRecord, every time.Duration, pokes <-chan struct{},
	heard func([]claims.Message, time.Time)) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	var lost atomic.Int64
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			in := publishOn(t, f, rec, &lost)
			heard(in.Mail, time.Now())
			select {
			case <-quit:
				return
			case <-tick.C:
			case <-pokes:
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			close(quit)
			<-done
			if n := lost.Load(); n > 0 {
				t.Logf("%d publishes lost every race to the senders", n)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// sendPatiently sends m, waiting while the box is full, as a person
// told so would.
func sendPatiently(f claims.Fleet, m claims.Message) error {
	for {
		err := f.Send(context.Background(), "h", "w", m)
		if !errors.Is(err, claims.ErrMailFull) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Latency sends n notes, spread over the worker's heartbeat (every), and
// returns how long each took from Send to a publish hearing it, sorted.
// With watch, the worker also publishes when its backend says something
// was written for it (claims.MailWatcher), as a driver does.
func Latency(t *testing.T, w World, every time.Duration, n int, watch bool) []time.Duration {
	worker, sender := w.Open(true), w.Open(false)
	rec := Record("h", "w", "run1")
	heardAt := map[string]time.Time{}
	var mu sync.Mutex
	var pokes <-chan struct{}
	if mw, ok := worker.(claims.MailWatcher); ok && watch {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		pokes = mw.MailChanges(ctx, rec.Host, rec.AgentID)
	} else if watch {
		t.Fatal("the backend says nothing of mail written (claims.MailWatcher)")
	}
	stop := publishing(t, worker, rec, every, pokes, func(ms []claims.Message, now time.Time) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			if _, ok := heardAt[m.ID]; !ok {
				heardAt[m.ID] = now
			}
		}
	})
	var took []time.Duration
	for i := range n {
		// Spread over the heartbeat, or over a second (git's poll) when
		// only the watch would hear it.
		space := min(every, time.Second)
		time.Sleep(space + space*time.Duration(i)/time.Duration(n))
		m := Note(fmt.Sprintf("note %d", i))
		start := time.Now()
		mustSend(t, sender, m)
		for end := time.Now().Add(min(every, 5*time.Second) + 10*time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			at, ok := heardAt[m.ID]
			mu.Unlock()
			if ok {
				took = append(took, at.Sub(start))
				break
			}
		}
	}
	stop()
	if len(took) != n {
		t.Fatalf("heard %d of %d notes", len(took), n)
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	return took
}
