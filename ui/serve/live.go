package serve

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"

	"github.com/fleetwatch/fleetwatch/ui"
)

// liveSession is an open session, so the server can end it: when its key
// is removed or loses rights, when its time is up, when the server stops.
type liveSession struct {
	sess  ssh.Session
	key   ssh.PublicKey
	id    Identity
	timer *time.Timer

	mu     sync.Mutex
	p      *tea.Program // nil until the cockpit starts and after it ends
	reason string       // why it was ended, "" while it may go on
}

// attach is the session's program starting; false when the session was
// ended before it could.
func (l *liveSession) attach(p *tea.Program) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reason != "" {
		return false
	}
	l.p = p
	return true
}

func (l *liveSession) detach() {
	l.mu.Lock()
	l.p = nil
	l.mu.Unlock()
}

func (l *liveSession) why() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reason
}

// end tells the session's program why and lets it quit, or closes a
// session without one; either way the channel is closed 2 s later at the
// latest.
func (l *liveSession) end(reason string) {
	l.mu.Lock()
	if l.reason != "" {
		l.mu.Unlock()
		return
	}
	l.reason = reason
	p := l.p
	l.mu.Unlock()
	if p != nil {
		p.Send(ui.StopMsg{Reason: reason})
		time.AfterFunc(2*time.Second, func() { _ = l.sess.Close() })
		return
	}
	fmt.Fprintf(l.sess.Stderr(), "fleetwatch: %s\r\n", reason)
	_ = l.sess.Close()
}

func (s *server) track(sess ssh.Session, id Identity) *liveSession {
	l := &liveSession{sess: sess, key: sess.PublicKey(), id: id}
	s.mu.Lock()
	s.live[l] = struct{}{}
	stopping := s.stopping
	s.mu.Unlock()
	if stopping {
		l.end(StopReason)
	}
	if d := s.lim.SessionLength; d > 0 {
		l.timer = time.AfterFunc(d, func() { l.end(fmt.Sprintf("this session reached its time limit (%v)", d)) })
	}
	return l
}

func (s *server) untrack(l *liveSession) {
	if l.timer != nil {
		l.timer.Stop()
	}
	s.mu.Lock()
	delete(s.live, l)
	s.mu.Unlock()
}

func (s *server) open() []*liveSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*liveSession, 0, len(s.live))
	for l := range s.live {
		out = append(out, l)
	}
	return out
}

// keyCheck is how often the key files are looked at for open sessions.
const keyCheck = 500 * time.Millisecond

// watchKeys ends the open sessions whose key a change to the key files
// removed, made a viewer's, or gave other options, within keyCheck.
func (s *server) watchKeys(ctx context.Context) {
	gen := s.keys.Check()
	tick := time.NewTicker(keyCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		g := s.keys.Check()
		if g == gen {
			continue
		}
		// A file being rewritten in place may have been read half
		// written: act once it holds still for a moment.
		for range 3 {
			time.Sleep(150 * time.Millisecond)
			if again := s.keys.Check(); again != g {
				g = again
				continue
			}
			break
		}
		gen = g
		for _, l := range s.open() {
			e, known := s.keys.known(l.key)
			cur, allowed := e.at(l.sess.RemoteAddr())
			if why := verdict(l.id, cur, known, allowed); why != "" {
				s.log.Printf("%s %s: %s", l.id.Agent, l.id.Fingerprint, why)
				l.end(why)
			}
		}
	}
}

// verdict is why a session opened as was may not go on as cur, the key's
// identity now for the same address, "" if it may: known is false for a
// key no longer listed, allowed for one none of whose lines allows the
// address.
func verdict(was, cur Identity, known, allowed bool) string {
	switch {
	case !known:
		return "your key was removed from the key files: this session is closed"
	case !allowed:
		return "your key may no longer log in from here: this session is closed"
	case cur.Viewer && !was.Viewer:
		return "your key is now a viewer's: this session is closed; log in again to watch"
	case !cur.Rules.equal(was.Rules):
		return "your key's options changed: this session is closed; log in again"
	case !cur.uses.equal(was.uses) || !cur.views.equal(was.views):
		return "your key's projects changed: this session is closed; log in again"
	}
	return ""
}
