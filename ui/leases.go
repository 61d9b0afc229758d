package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// leaseList is the Leases pane: every lease file, as an operator triages.
type leaseList struct {
	table
	paneFilter
	rows []model.Lease
	cols leaseCols
}

func (l *leaseList) rebuild(m *Model) {
	if m.d == nil {
		return
	}
	f := l.needle()
	l.rows = slices.DeleteFunc(sortLeases(m.d.board.Leases, m.d.now), func(x model.Lease) bool {
		return !anyContains(f, x.Rel, x.AgentID, x.Origin, x.Host)
	})
	keys := make([]string, len(l.rows))
	for i := range l.rows {
		keys[i] = leaseKey(&l.rows[i])
	}
	l.cols = leaseColumns(l.width, l.rows)
	c := l.cols
	l.setShared(keys, rowsOf{pane: leasesPane, d: m.d, needle: f, cols: c}, func(m *Model, i int, sel bool) string { return m.leaseLine(&m.leases.rows[i], c, sel) })
}

func (l *leaseList) selected() selection {
	if l.cursor >= len(l.rows) {
		return selection{}
	}
	lease := &l.rows[l.cursor]
	return selection{rel: lease.Rel, lease: lease}
}

func (l *leaseList) syncKeys(m *Model, set setKey) {
	here := m.pane == leasesPane
	release, recover := m.releaseRecover()
	set(&m.keys.Leases.Release, here && release, "release: select a plan with a lease (u returns one without)")
	set(&m.keys.Leases.Recover, here && recover, "recover: select an expired, unreadable or left-over lease")
	set(&m.keys.Leases.Open, here && l.cursor < len(l.rows), "open: select a lease in the leases pane (2)")
}

func (l *leaseList) update(m *Model, msg tea.KeyMsg) (tea.Cmd, bool) {
	k := &m.keys.Leases
	switch {
	case key.Matches(msg, k.Release):
		m.askRelease()
	case key.Matches(msg, k.Recover):
		m.askRecover()
	case key.Matches(msg, k.Open):
		return m.openLease(), true
	default:
		return nil, false
	}
	return nil, true
}

func (l *leaseList) view(m *Model, h int) []string {
	return m.tableBox(m.filterTitle("Leases", &l.paneFilter), l.cols.header(), &l.table, h, m.emptyText(&l.paneFilter, "no leases: nothing is claimed"))
}

// LeaseKeys are the Leases pane's.
type LeaseKeys struct{ Release, Recover, Open key.Binding }

// sortLeases orders leases as an operator triages them: unreadable and
// expired first, then by time left.
func sortLeases(ls []model.Lease, now float64) []model.Lease {
	out := slices.Clone(ls)
	state := func(l *model.Lease) int {
		switch {
		case l.Corrupt != "":
			return 0
		case !l.Active(now):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(out, func(a, b model.Lease) int {
		if sa, sb := state(&a), state(&b); sa != sb {
			return sa - sb
		}
		switch {
		case a.ExpiresAt < b.ExpiresAt:
			return -1
		case a.ExpiresAt > b.ExpiresAt:
			return 1
		}
		return strings.Compare(a.Rel, b.Rel)
	})
	return out
}

type leaseCols struct{ plan, owner, origin, claimed, expires int }

// leaseColumns sizes the leases table for width w and the leases shown:
// the owner first, then the plan, then where it came from; the plan takes
// what is left.
func leaseColumns(w int, rows []model.Lease) leaseCols {
	plan, owner, origin, expires := len("plan"), len("owner"), 0, 18
	for i := range rows {
		l := &rows[i]
		plan, owner = max(plan, cellWidth(l.Rel)), max(owner, cellWidth(ownerText(l)))
		// An inbox-held lease says what it waits for, in words.
		expires = max(expires, min(40, cellWidth(l.AwaitingText())))
		if l.Origin != "" {
			origin = max(origin, len("origin"), cellWidth(l.Origin))
		}
	}
	c := leaseCols{claimed: 10, expires: expires}
	room := w - lead + 1 - (c.claimed + 1) - (c.expires + 1)
	// A remote lease's owner says where it is held: room for a host.
	room = allot(room, colWant{&c.owner, owner, 8, 40}, colWant{&c.plan, plan, 10, 60}, colWant{&c.origin, origin, origin, 60})
	c.plan += max(0, room)
	return c
}

func (c leaseCols) header() string {
	h := strings.Repeat(" ", lead) + fit("plan", c.plan) + " " + fit("owner", c.owner) + " "
	if c.origin > 0 {
		h += fit("origin", c.origin) + " "
	}
	return h + fit("claimed", c.claimed) + " " + fit("expires", c.expires)
}

func (m *Model) leaseLine(l *model.Lease, c leaseCols, selected bool) string {
	plain := m.plain
	var b strings.Builder
	b.WriteString(gutter(selected))
	mark, expires, bad := "●", "in "+span(l.ExpiresAt-m.now), false
	switch {
	case l.Awaiting != "" && l.Corrupt == "":
		// Held by the inbox: it never runs out, whatever its expires_at.
		mark, expires = "◇", l.AwaitingText()
	case l.Corrupt != "":
		mark, expires, bad = "?", "UNREADABLE", true
	case !l.Active(m.now):
		mark, expires, bad = "✗", "EXPIRED "+span(m.now-l.ExpiresAt)+" ago", true
	}
	if !plain && bad {
		mark = m.st.Bad.Render(mark)
	} else if !plain {
		mark = m.st.Good.Render(mark)
	}
	b.WriteString(mark + " ")
	plan := termtext.Line(l.Rel)
	if len(plan) > c.plan {
		// Narrow: the plan's name says more than its lane.
		plan = slugOf(plan)
	}
	b.WriteString(fit(plan, c.plan) + " " + fit(ownerText(l), c.owner) + " ")
	if c.origin > 0 {
		b.WriteString(fit(termtext.Line(l.Origin), c.origin) + " ")
	}
	claimed := ""
	if l.Corrupt == "" {
		claimed = coarse(m.now-l.ClaimedAt) + " ago"
	}
	b.WriteString(fit(claimed, c.claimed) + " ")
	cell := fit(expires, c.expires)
	if !plain && bad {
		cell = m.st.Bad.Render(cell)
	}
	b.WriteString(cell)
	return m.finish(b.String(), selected)
}

// leaseKey is a lease's identity in the Leases pane: its file, or for a
// remote lease (which has none) its backend and plan.
func leaseKey(l *model.Lease) string {
	if remoteLease(l) {
		return l.Backend + ":" + l.Rel
	}
	return l.File
}

// ownerText is a lease's owner as the tables show it.
func ownerText(l *model.Lease) string { return termtext.Line(l.AgentID) + heldOn(l) }

// openLease shows the selected lease: every field, then the file as it is.
func (m *Model) openLease() tea.Cmd {
	s := m.leases.selected()
	if s.lease == nil {
		return nil
	}
	l, t, now := *s.lease, m.opt.Tree, m.now
	if remoteLease(&l) {
		// Read already, with the view: nothing on disk to read.
		return m.openDetail("lease:"+leaseKey(&l), "lease · "+slugOf(l.Rel)+heldOn(&l), func() func(*Model) []string {
			return func(m *Model) []string { return remoteLeaseDetail(m, l, now) }
		})
	}
	return m.openDetail("lease:"+l.File, "lease · "+l.Rel, func() func(*Model) []string {
		raw, cut, err := t.ReadLeaseRaw(l.File)
		return func(m *Model) []string { return leaseDetail(m, l, raw, cut, err, now) }
	})
}

func leaseDetail(m *Model, l model.Lease, raw []byte, cut bool, err error, now float64) []string {
	d := &detailText{m: m}
	d.heading("Lease")
	d.field("file", planfs.Dir+"/.leases/"+l.File)
	d.field("plan file", l.Rel)
	switch {
	case l.Corrupt != "":
		d.field("state", "UNREADABLE: "+l.Corrupt)
	case !l.Active(now):
		d.field("state", "EXPIRED "+span(now-l.ExpiresAt)+" ago")
	default:
		d.field("state", "active, "+timeLeft(&l, now))
	}
	if l.Corrupt != "" && l.ModTime > 0 {
		// How old an unreadable lease is decides when recover may take it.
		d.field("modified", stamp(l.ModTime, now))
	}
	if l.Corrupt == "" {
		d.heading("Anchor's fields")
		d.field("plan", l.Plan)
		d.field("agent_id", l.AgentID)
		d.field("claimed_at", stamp(l.ClaimedAt, now))
		d.field("expires_at", stamp(l.ExpiresAt, now))
		d.field("origin", l.Origin)
		d.heading("Fleetwatch's fields")
		d.field("host", l.Host)
		d.field("pid", itoa(l.PID))
		d.field("pid_scope", l.PIDScope)
		d.field("token", l.Token)
		d.extraFields(raw, "plan", "agent_id", "claimed_at", "expires_at", "origin", "host", "pid", "pid_scope", "token")
	}
	d.heading("On disk")
	switch {
	case err != nil:
		d.note("cannot read it: " + err.Error())
	default:
		d.rawJSON(raw)
		if cut {
			d.note("… only the first 64 KiB are shown")
		}
	}
	return d.lines
}

// remoteLeaseDetail is a remote lease read whole: where the backend keeps
// it, who holds it where, and the lease as the backend holds it.
func remoteLeaseDetail(m *Model, l model.Lease, now float64) []string {
	d := &detailText{m: m}
	d.heading("Remote lease")
	where := l.Backend
	if l.Backend == "git" {
		where = "git ref refs/fleetwatch/leases/" + slugOf(l.Rel)
	}
	if m.remote != nil {
		where += " · " + m.remote.c.Where
	}
	d.field("kept in", where)
	d.field("plan file", l.Origin+" (shown in progress)")
	d.field("held by", ownerText(&l))
	if l.Active(now) {
		d.field("state", "active, "+timeLeft(&l, now))
	} else {
		d.field("state", "EXPIRED "+span(now-l.ExpiresAt)+" ago (R takes it over)")
	}
	if r := m.remote; r != nil && r.view != nil {
		d.field("read", readAge(now-unixOf(r.view.ReadAt))+" ago")
		if rl := r.view.Lease(slugOf(l.Rel)); rl != nil && rl.Need > 0 {
			d.field("seen unchanged", span(rl.SeenFor.Seconds())+" of the "+span(rl.Need.Seconds())+" a takeover needs")
		}
	}
	d.heading("Fields")
	d.field("agent_id", l.AgentID)
	d.field("host", l.Host)
	d.field("pid", itoa(l.PID))
	d.field("claimed_at", stamp(l.ClaimedAt, now))
	d.field("token", l.Token)
	d.field("epoch", strconv.FormatInt(l.Epoch, 10))
	d.field("ttl", span(l.TTL))
	return d.lines
}

// timeLeft is how long an active lease still runs, "12m left", or for an
// inbox-held one, which never runs out, what it waits for.
func timeLeft(l *model.Lease, now float64) string {
	if w := l.AwaitingText(); w != "" {
		return w
	}
	return span(l.ExpiresAt-now) + " left"
}

// releaseRecover says whether r and R apply to the selection.
func (m *Model) releaseRecover() (release, recover bool) {
	rel, _, lease := m.target()
	lane := model.Rel(rel).Lane()
	exists := rel != "" && m.planExists(rel)
	return exists && lane == model.InProgress && lease != nil, lease != nil && (!lease.Active(m.now) || !exists)
}

func (m *Model) askRelease() {
	rel, _, lease := m.target()
	body := []string{"Give up the claim on " + rel + "; the plan goes back to the lane it came from.",
		m.holder(lease)}
	body = append(body, m.takes(lease, "Releasing")...)
	t, agent, force := m.opt.Tree, m.opt.Agent, m.force(lease, model.InProgress)
	m.ask(&dialog{
		title: "Release " + slugOf(rel), body: body, verb: "release",
		do: m.remoteOr(model.Release, rel, lease, func(model.Lane, string) tea.Cmd { return releaseCmd(t, rel, agent, force) }),
	}, rel, lease)
}

func (m *Model) askRecover() {
	rel, _, lease := m.target()
	lane := model.Rel(rel).Lane()
	t, agent, ttl := m.opt.Tree, m.opt.Agent, m.opt.TTL
	if !m.planExists(rel) && m.remote != nil {
		m.setStatus("✗ recover: no plan at "+rel+" on the remote branch; a left-over remote lease is the backend's to clear (work-once --recover)", true)
		return
	}
	if !m.planExists(rel) {
		m.ask(&dialog{
			title: "Remove a left-over lease",
			body: []string{"No plan is at " + rel + " any more; this lease is left over from a claim. " + m.holder(lease),
				"Remove it with the repair every work-once run does."},
			verb: "repair",
			do:   func(model.Lane, string) tea.Cmd { return repairCmd(t) },
		}, rel, lease)
		return
	}
	body := []string{m.holder(lease)}
	if lane == model.InProgress {
		body = append(body, "You ("+m.opt.Agent+") take the lease over for "+span(m.opt.TTL)+"; then r releases the plan or c completes it.")
	} else {
		body = append(body, "The stale lease is dropped, so agents can pick "+rel+" again.")
	}
	m.ask(&dialog{
		title: "Recover " + slugOf(rel), body: body, verb: "recover",
		do: m.remoteOr(model.Recover, rel, lease, func(model.Lane, string) tea.Cmd { return recoverCmd(t, rel, agent, ttl) }),
	}, rel, lease)
}

func releaseCmd(t *planfs.Tree, rel, agent string, force bool) tea.Cmd {
	return actionCmd("release", func() (string, error) {
		dst, err := t.Release(rel, planfs.Actor{AgentID: agent, Force: force})
		return "released " + slugOf(rel) + " → " + laneOf(dst), err
	})
}

func recoverCmd(t *planfs.Tree, rel, agent string, ttl float64) tea.Cmd {
	return actionCmd("recover", func() (string, error) {
		l, err := workers.Recover(t, rel, planfs.Actor{AgentID: agent}, ttl)
		if l == nil {
			return "recovered " + slugOf(rel) + ": its stale lease is gone", err
		}
		return "recovered " + slugOf(rel) + ": now held by " + agent + " for " + span(ttl) + " (r releases it)", err
	})
}

// repairCmd runs the repair every work-once run starts with: left-over
// leases, half-done claims and twin files.
func repairCmd(t *planfs.Tree) tea.Cmd {
	return actionCmd("repair", func() (string, error) {
		snap, err := t.Scan()
		if err != nil {
			return "", err
		}
		r := t.Repair(snap)
		if len(r.Fixed) == 0 {
			return "", fmt.Errorf("nothing repaired (another worker may be mid-claim; try again in a minute)")
		}
		return "repaired: " + strings.Join(r.Fixed, "; "), nil
	})
}
