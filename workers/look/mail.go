package look

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/fleetwatch/fleetwatch/internal/atomicfile"
	"github.com/fleetwatch/fleetwatch/internal/safepath"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// A person's message to a running agent on this machine (a note, an
// interrupt, an answer) is a file in the agent's mail folder, written
// whole by rename; its driver watches the folder, acts on each message
// between two steps of its loop and writes the reply beside it, which the
// sender waits for. A contained agent cannot write var/, so it cannot
// write to its own driver this way; across machines the claims backend
// carries messages instead (claims.Fleet).

// MailDir holds each agent's mail folder, relative to the project.
const MailDir = "var/fleet/mail"

// MaxMailWaiting bounds the messages one agent's folder holds: a sender
// finding that many is refused rather than filling the disk.
const MaxMailWaiting = 64

// How a driver took a message (MailReply.Outcome).
const (
	MailSteered     = "steered"     // into the turn running now
	MailQueued      = "queued"      // for the conversation's next turn
	MailKept        = "kept"        // for the plan's next run (a one-shot run)
	MailInterrupted = "interrupted" // the running turn was ended
	MailAnswered    = "answered"    // the agent's question got its answer
	MailRefused     = "refused"     // Reason says why
	// MailSent: stored for a worker on another machine, whose driver
	// takes it at its next heartbeat (and logs how).
	MailSent = "sent"
)

// MailReply is a driver's answer to a message.
type MailReply struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	// Plan is the plan the run works on.
	Plan string `json:"plan,omitempty"`
}

// Refused is a refusal for why.
func Refused(why string) MailReply { return MailReply{Outcome: MailRefused, Reason: why} }

// mailFolder is agent's mail folder, checked free of symlinks.
func mailFolder(project, agent string) (string, error) {
	rel := MailDir + "/" + tree.SafeID(agent)
	if err := safepath.Check(project, rel); err != nil {
		return "", err
	}
	return filepath.Join(project, filepath.FromSlash(rel)), nil
}

// SendMail leaves m for agent's driver on this machine and waits, at most
// until ctx ends, for its reply. The message is taken back when no reply
// comes: nothing is acted on after its sender gave up waiting for it.
func SendMail(ctx context.Context, project, agent string, m claims.Message) (MailReply, error) {
	m = m.Bounded()
	if p := m.Problem(); p != "" {
		return MailReply{}, errors.New(p)
	}
	dir, err := mailFolder(project, agent)
	if err != nil {
		return MailReply{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return MailReply{}, err
	}
	if entries, _ := os.ReadDir(dir); len(entries) >= MaxMailWaiting {
		return MailReply{}, fmt.Errorf("%d messages already wait for %s's driver: it is not reading them", len(entries), agent)
	}
	b, _ := json.Marshal(m)
	// Named by the time it was sent: the driver takes them in order.
	name := fmt.Sprintf("%020d-%s", time.Now().UnixNano(), tree.SafeID(m.ID))
	msgPath, replyPath := filepath.Join(dir, name+".json"), filepath.Join(dir, name+".reply")
	if err := atomicfile.Write(msgPath, b, 0o600); err != nil {
		return MailReply{}, err
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if rep, ok := readReply(replyPath); ok {
			os.Remove(replyPath)
			return rep, nil
		}
		select {
		case <-ctx.Done():
			if os.Remove(msgPath) != nil {
				// Taken as the wait ended: its reply is on its way.
				if rep, ok := waitReply(replyPath, time.Second); ok {
					return rep, nil
				}
			}
			return MailReply{}, fmt.Errorf("%s's driver did not take the message: %w", agent, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

func waitReply(path string, d time.Duration) (MailReply, bool) {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if rep, ok := readReply(path); ok {
			os.Remove(path)
			return rep, true
		}
	}
	return MailReply{}, false
}

func readReply(path string) (MailReply, bool) {
	f, err := os.Open(path)
	if err != nil {
		return MailReply{}, false
	}
	defer f.Close()
	var rep MailReply
	if json.NewDecoder(io.LimitReader(f, 64<<10)).Decode(&rep) != nil {
		return MailReply{}, false
	}
	rep.Reason, rep.Plan = claims.Clip(rep.Reason, 512), claims.Clip(rep.Plan, 512)
	return rep, rep.Outcome != ""
}

// Mailbox is a driver's side of its agent's mail folder.
type Mailbox struct {
	dir   string
	fw    *fsnotify.Watcher
	out   chan claims.Message
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	names map[string]string // message id → file name, until replied to
	taken map[string]bool   // the file names in names
}

// mailPoll is how often the folder is read besides fsnotify's word: a
// watch that missed an event costs at most this.
const mailPoll = 2 * time.Second

// OpenMailbox opens agent's mail folder for its driver. What a driver that
// died left unanswered is refused: it was meant for a run that is over.
func OpenMailbox(project, agent string) (*Mailbox, error) {
	dir, err := mailFolder(project, agent)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cannot watch %s: %v", dir, err)
	}
	if err := fw.Add(dir); err != nil {
		fw.Close()
		return nil, fmt.Errorf("cannot watch %s: %v", dir, err)
	}
	b := &Mailbox{dir: dir, fw: fw, out: make(chan claims.Message), stop: make(chan struct{}), done: make(chan struct{}), names: map[string]string{}, taken: map[string]bool{}}
	for _, name := range b.waiting() {
		b.reply(name, Refused("the run it was for is over"))
	}
	go b.run()
	return b, nil
}

// Messages are the messages sent to the driver, in the order sent, each
// once; every one must get a Reply.
func (b *Mailbox) Messages() <-chan claims.Message {
	if b == nil {
		return nil
	}
	return b.out
}

// Reply answers the message with id.
func (b *Mailbox) Reply(id string, rep MailReply) {
	b.mu.Lock()
	name, ok := b.names[id]
	b.mu.Unlock()
	if !ok {
		return
	}
	b.reply(name, rep)
	// Only now may the folder's reader forget it: the message is gone.
	b.mu.Lock()
	delete(b.names, id)
	delete(b.taken, name)
	b.mu.Unlock()
}

// reply takes the message away, then answers it: the sender, which gives
// up only on a message still there, never misses an answer, and the
// folder's reader never takes an answered message again.
func (b *Mailbox) reply(name string, rep MailReply) {
	os.Remove(filepath.Join(b.dir, name+".json"))
	data, _ := json.Marshal(rep)
	_ = atomicfile.Write(filepath.Join(b.dir, name+".reply"), data, 0o600)
}

// Close stops watching; what is still unread stays for no one and is
// refused by the next driver.
func (b *Mailbox) Close() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		close(b.stop)
		<-b.done
		b.fw.Close()
	})
}

// waiting are the messages in the folder not replied to, oldest first.
func (b *Mailbox) waiting() []string {
	entries, _ := os.ReadDir(b.dir)
	var names []string
	replied := map[string]bool{}
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".reply"); ok {
			replied[n] = true
		}
	}
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".json"); ok && e.Type().IsRegular() && !replied[n] {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

func (b *Mailbox) run() {
	defer close(b.done)
	poll := time.NewTicker(mailPoll)
	defer poll.Stop()
	for {
		for _, name := range b.waiting() {
			b.mu.Lock()
			taken := b.taken[name]
			b.mu.Unlock()
			if taken {
				continue
			}
			m, ok := b.read(name)
			if !ok {
				continue
			}
			select {
			case b.out <- m:
			case <-b.stop:
				return
			}
		}
		select {
		case <-b.stop:
			return
		case <-b.fw.Events:
		case <-b.fw.Errors:
		case <-poll.C:
		}
	}
}

// read takes one message file: a message that is not one is refused at
// once and never reaches the driver.
func (b *Mailbox) read(name string) (claims.Message, bool) {
	f, err := os.Open(filepath.Join(b.dir, name+".json"))
	if err != nil {
		return claims.Message{}, false
	}
	var m claims.Message
	err = json.NewDecoder(io.LimitReader(f, 64<<10)).Decode(&m)
	f.Close()
	m = m.Bounded()
	if err == nil {
		if p := m.Problem(); p != "" {
			err = errors.New(p)
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.names[m.ID]; dup && err == nil {
		err = errors.New("a message with this id already waits")
	}
	if err != nil {
		b.reply(name, Refused(err.Error()))
		return claims.Message{}, false
	}
	b.names[m.ID], b.taken[name] = name, true
	return m, true
}
