package ui

// Other machines' workers, as their drivers publish them through a remote
// claims backend (claims.Fleet): read with every read of the backend, and
// at once when the backend says a record changed (claims.FleetWatcher,
// etcd). The Workers pane shows them after this machine's own, judged on
// this machine's clock; its stop key asks one to stop through its record.

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/proc"
)

// publishedRead is one read of the published records; err keeps the last
// good one on screen.
type publishedRead struct {
	pubs []look.Published
	at   time.Time
	err  error
}

// publishedMsg is a read made on the backend's word that a record changed.
type publishedMsg struct{ r *publishedRead }

// publishedChangeMsg is that word.
type publishedChangeMsg struct{}

// readPublished reads c's worker records; nil when c keeps none.
func readPublished(c *claims.Opened) *publishedRead {
	f, ok := c.Backend.(claims.Fleet)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
	defer cancel()
	pubs, err := look.ReadPublished(ctx, f)
	return &publishedRead{pubs: pubs, at: time.Now(), err: err}
}

func publishedCmd(c *claims.Opened) tea.Cmd {
	return func() tea.Msg { return publishedMsg{readPublished(c)} }
}

func waitPublishedCmd(ch <-chan struct{}) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		if _, ok := <-ch; !ok {
			return nil
		}
		return publishedChangeMsg{}
	}
}

// takePublished keeps a read's records (a failed read keeps the last) and
// judges the Workers pane's rows again.
func (m *Model) takePublished(r *publishedRead) {
	if r == nil {
		return
	}
	if r.err != nil {
		m.wrk.pubErr = r.err.Error()
		return
	}
	m.wrk.published, m.wrk.pubAt, m.wrk.pubErr = r.pubs, r.at, ""
	m.wrk.judge(m.Opt.Tree.Now())
}

// publishedLoaded takes a read of the other machines' workers.
func (m *Model) publishedLoaded(msg publishedMsg) tea.Cmd {
	m.takePublished(msg.r)
	c := m.ctx()
	m.wrk.Rebuild(c)
	m.syncKeys()
	return tea.Batch(m.lookForNotices(fromWorkers), m.startTicking())
}

var errNoFleet = errors.New("the claims backend keeps no worker records")

// remoteStopCmd asks the published worker st to stop through c.
func remoteStopCmd(c *claims.Opened, st look.State) tea.Cmd {
	return uictx.Action("stop", func() (string, error) {
		f, ok := c.Backend.(claims.Fleet)
		if !ok {
			return "", errNoFleet
		}
		ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
		defer cancel()
		if err := proc.StopRemote(ctx, f, st, "the cockpit on "+look.Hostname()); err != nil {
			return "", err
		}
		return "asked " + termtext.Line(st.AgentID) + " on " + termtext.Line(st.Host) + " to stop; its driver stops at its next heartbeat and gives its plan back", nil
	})
}

// rereadPublished is p read again from its own record (never through the
// capped listing), with when this machine first saw it as it is; p as
// listed when c keeps no records or the read fails.
func rereadPublished(c *claims.Opened, p look.Published, seenAt time.Time) (look.Published, time.Time) {
	if c == nil || p.Problem != "" {
		return p, seenAt
	}
	f, ok := c.Backend.(claims.Fleet)
	if !ok {
		return p, seenAt
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteReadTimeout)
	defer cancel()
	fresh, err := look.ReadWorker(ctx, f, p.Host, p.AgentID)
	if err != nil {
		return p, seenAt
	}
	return fresh, time.Now().Add(-fresh.SeenFor)
}

// fetchServedLog asks p's machine's fleetwatch serve for its last lines,
// as the operator (look.LogFetch); nothing when it runs none.
func fetchServedLog(p look.Published) ([]string, error) {
	if p.Serve == "" {
		return nil, nil
	}
	dial, err := look.ServeElsewhere(context.Background(), p.Serve)
	if err != nil {
		return nil, err
	}
	return look.LogFetch{Addr: p.Serve, Dial: dial, Agent: p.AgentID, N: look.DetailLogLines}.Fetch(context.Background())
}
