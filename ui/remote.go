package ui

// A project whose claims live in a remote backend (the git remote's lease
// refs, etcd): the lanes and leases come from one read of the backend
// (claims.View: the remote integration branch with every remote lease
// overlaid), made inside a tea.Cmd on a timer, on the backend's own word
// of a change (claims.Watcher) and on the disk watcher's events. A read
// that fails keeps the last good view and says why in the header. Verbs
// go to the backend (act.go, as every verb); the UI never reads the remote
// itself.

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/feed"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// remoteReadTimeout bounds one read of the backend; the backend bounds
// each git or etcd call itself, this bounds the whole read.
const remoteReadTimeout = 60 * time.Second

// remoteState is what the model knows of its remote backend: the last
// good view, why the last read failed, and its timer and watch.
type remoteState struct {
	c     *claims.Opened
	view  *claims.View // the last good read; nil before the first
	err   error        // why the last read failed; nil when it did not
	timed bool         // a claims.ReadEvery timer is pending
	watch <-chan struct{}
	// fleetWatch says when a worker record changed (remoteworkers.go).
	fleetWatch <-chan struct{}
	cancel     context.CancelFunc // ends the watches
}

// remoteTickMsg is claims.ReadEvery passing: read the backend again.
type remoteTickMsg struct{}

// remoteChangeMsg is the backend's word that its leases changed.
type remoteChangeMsg struct{}

// newRemote is the remote state for opt's backend, or nil for the local
// lease files. A served session's backend is its hub's.
func newRemote(opt uictx.Options) *remoteState {
	c := opt.Claims
	if h := hubOf(opt); c == nil && h != nil {
		c = h.Claims()
	}
	if c == nil || c.Backend == nil {
		return nil
	}
	return &remoteState{c: c}
}

// startWatch subscribes to a backend that says when its leases change
// (etcd) and to its word on worker records (etcd's watch, git's listing);
// a hub's session leaves that to the hub and its timer.
func (r *remoteState) startWatch() {
	ctx, cancel := context.WithCancel(context.Background())
	if w, ok := r.c.Backend.(claims.Watcher); ok {
		r.watch = w.Changes(ctx)
	}
	r.fleetWatch, r.cancel = feed.FleetWatch(ctx, r.c), cancel
}

func (r *remoteState) close() {
	if r != nil && r.cancel != nil {
		r.cancel()
	}
}

// readRemote is one read of c judged for every tier: the model runs it in
// a tea.Cmd, a hub once for all its sessions. A failed read brings only
// its error: the model keeps what it shows.
func readRemote(t *planfs.Tree, c *claims.Opened) loadedMsg {
	ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
	defer cancel()
	v, err := c.Backend.View(ctx)
	if err == nil && (v == nil || v.Snapshot == nil) {
		err = errors.New("the backend returned no view")
	}
	if err != nil {
		return loadedMsg{remoteErr: err, published: readPublished(c)}
	}
	msg := boardOfView(t, v)
	msg.published = readPublished(c)
	return msg
}

// boardOfView judges a remote view as loadBoard judges a scan: the lanes
// of the remote branch with its leases overlaid; the event log and the
// symlink checks are this machine's own.
func boardOfView(t *planfs.Tree, v *claims.View) loadedMsg {
	now := t.NowSeconds()
	b := model.NewBoard(v.Snapshot, model.Options{Now: now, History: t.History()})
	b.Leases = v.Snapshot.Leases
	b.Warnings = append(b.Warnings, look.BoardProblems(t.Project)...)
	b.Warnings = append(b.Warnings, look.CapWarnings(t.Project, b.Leases, now)...)
	d := uictx.NewData(b, now)
	d.Events, d.EventsErr = t.RecentEvents(eventsShown)
	d.Parked = parkReasons(d.Events)
	d.Commits = look.BranchCommits(t.Project)
	return loadedMsg{d: d, view: v}
}

// boardCmd reads the board: a scan of the tree, or a read of the remote
// claims backend r.
func boardCmd(t *planfs.Tree, r *remoteState) tea.Cmd {
	if r != nil {
		c := r.c
		return func() tea.Msg { return readRemote(t, c) }
	}
	return loadCmd(t)
}

func remoteTickCmd() tea.Cmd {
	return tea.Tick(claims.ReadEvery, func(time.Time) tea.Msg { return remoteTickMsg{} })
}

// waitRemoteCmd waits for the backend's next change; issued again only
// when its own message arrives.
func waitRemoteCmd(ch <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return nil
		}
		return remoteChangeMsg{}
	}
}

// took takes a read's outcome: a good view replaces the last; a failed
// read is remembered beside it (a hub's brings the last good board along).
// It reports whether there is a board to show.
func (r *remoteState) took(m *Model, msg loadedMsg) bool {
	if r == nil {
		return msg.err == nil
	}
	if msg.view != nil {
		r.view = msg.view
	}
	m.takePublished(msg.published)
	r.err = msg.remoteErr
	return msg.d != nil && msg.err == nil
}

// timer starts the timer after a read, once: it is issued again only when
// its own message arrives. A test without watchers starts none.
func (r *remoteState) timer(opt uictx.Options) tea.Cmd {
	if r == nil || opt.NoWatch || r.timed {
		return nil
	}
	r.timed = true
	return remoteTickCmd()
}

// handle takes the remote's own messages: the timer and the watches.
func (r *remoteState) handle(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	switch msg.(type) {
	case remoteTickMsg:
		r.timed = false
		return tea.Batch(m.request(feed.Board.Set()), r.timer(m.Opt)), true
	case publishedChangeMsg:
		return tea.Batch(waitPublishedCmd(r.fleetWatch), publishedCmd(r.c)), true
	case remoteChangeMsg:
		var next tea.Cmd
		if r.watch != nil {
			next = waitRemoteCmd(r.watch)
		}
		return tea.Batch(next, m.request(feed.Board.Set())), true
	}
	return nil, false
}

// mark is the header's word on the claims backend: where it is and
// how old the view is, or why it cannot be read. Narrow headers get it
// short.
func (r *remoteState) mark(c *uictx.Common) string {
	if r == nil {
		return ""
	}
	s := " · claims: " + termtext.Line(r.c.Where)
	if !c.Wide {
		s = " · " + termtext.Line(r.c.Backend.Name())
	}
	if r.view != nil {
		age := kit.ReadAge(c.Now - kit.UnixOf(r.view.ReadAt))
		if c.Wide {
			s += " · read " + age + " ago"
		} else {
			s += " " + age + " ago"
		}
	}
	if r.err != nil {
		warn := " · ⚠ cannot read: " + termtext.Line(r.err.Error())
		if !c.Plain {
			warn = c.St.Bad.Render(warn)
		}
		s += warn
	}
	return s
}
