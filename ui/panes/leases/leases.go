// Package leases is the cockpit's Leases pane: every lease, local file or
// remote, as an operator triages them, with release, recover and each
// lease opened whole.
package leases

import (
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/ui/verbs"
)

// Pane is the Leases pane: every lease file, as an operator triages.
type Pane struct {
	kit.Table
	kit.Filter
	id   uictx.PaneID // its place in the tab order
	rows []model.Lease
	cols leaseCols
}

func (l *Pane) Rebuild(pc *uictx.Ctx) {
	if pc.D == nil {
		return
	}
	f := l.Needle()
	l.rows = slices.DeleteFunc(sortLeases(pc.D.Board.Leases, pc.D.Now), func(x model.Lease) bool {
		return !kit.AnyContains(f, x.Rel, x.AgentID, x.Origin, x.Host)
	})
	keys := make([]string, len(l.rows))
	for i := range l.rows {
		keys[i] = leaseKey(&l.rows[i])
	}
	l.cols = leaseColumns(l.Width, l.rows)
	c := l.cols
	cm := pc.Common
	l.SetShared(keys, sharedRows{pc.D, f, c}, func(i int, sel bool) string {
		return leaseLine(cm, &l.rows[i], c, sel)
	})
}

// sharedRows is what the rows are made of, for the sessions that draw
// them alike (kit.Table.SetShared): the reading, the filter, the columns.
type sharedRows struct {
	d      *uictx.Data
	needle string
	cols   leaseCols
}

// New is the Leases pane at id in the tab order.
func New(id uictx.PaneID) uictx.Pane { return &Pane{id: id} }

// Rows are the leases shown, in their order.
func (l *Pane) Rows() []model.Lease { return l.rows }

// Widths are the plan's and the owner's columns as sized last.
func (l *Pane) Widths() (plan, owner int) { return l.cols.plan, l.cols.owner }

func (l *Pane) Selected() uictx.Selection {
	if l.Cursor >= len(l.rows) {
		return uictx.Selection{}
	}
	lease := &l.rows[l.Cursor]
	return uictx.Selection{Rel: lease.Rel, Lease: lease}
}

func (l *Pane) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	here := pc.Shown == l.id
	release, recover := verbs.ReleaseRecover(pc)
	set(&pc.Keys.Leases.Release, here && release, "release: select a plan with a lease (u returns one without)")
	set(&pc.Keys.Leases.Recover, here && recover, "recover: select an expired, unreadable or left-over lease")
	set(&pc.Keys.Leases.Open, here && l.Cursor < len(l.rows), "open: select a lease in the leases pane (2)")
}

func (l *Pane) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	k := &pc.Keys.Leases
	switch {
	case key.Matches(msg, k.Release):
		return verbs.AskRelease(pc), true
	case key.Matches(msg, k.Recover):
		return verbs.AskRecover(pc), true
	case key.Matches(msg, k.Open):
		return l.open(pc), true
	}
	return nil, false
}

func (l *Pane) View(pc *uictx.Ctx, h int) []string {
	return pc.TableBox(kit.FilterTitle("Leases", &l.Filter), l.cols.header(), &l.Table, h, kit.EmptyText(&l.Filter, "no leases: nothing is claimed"))
}

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
		plan, owner = max(plan, kit.CellWidth(l.Rel)), max(owner, kit.CellWidth(kit.OwnerText(l)))
		// An inbox-held lease says what it waits for, in words.
		expires = max(expires, min(40, kit.CellWidth(l.AwaitingText())))
		if l.Origin != "" {
			origin = max(origin, len("origin"), kit.CellWidth(l.Origin))
		}
	}
	c := leaseCols{claimed: 10, expires: expires}
	room := w - kit.Lead + 1 - (c.claimed + 1) - (c.expires + 1)
	// A remote lease's owner says where it is held: room for a host.
	room = kit.Allot(room, kit.Col(&c.owner, owner, 8, 40), kit.Col(&c.plan, plan, 10, 60), kit.Col(&c.origin, origin, origin, 60))
	c.plan += max(0, room)
	return c
}

func (c leaseCols) header() string {
	h := strings.Repeat(" ", kit.Lead) + kit.Fit("plan", c.plan) + " " + kit.Fit("owner", c.owner) + " "
	if c.origin > 0 {
		h += kit.Fit("origin", c.origin) + " "
	}
	return h + kit.Fit("claimed", c.claimed) + " " + kit.Fit("expires", c.expires)
}

// leaseLine is a lease's row, not yet highlighted (kit.Table highlights the selected one).
func leaseLine(cm *uictx.Common, l *model.Lease, c leaseCols, selected bool) string {
	plain := cm.Plain
	var b strings.Builder
	b.WriteString(kit.Gutter(selected))
	mark, expires, bad := "●", "in "+kit.Span(l.ExpiresAt-cm.Now), false
	switch {
	case l.Awaiting != "" && l.Corrupt == "":
		// Held by the inbox: it never runs out, whatever its expires_at.
		mark, expires = "◇", l.AwaitingText()
	case l.Corrupt != "":
		mark, expires, bad = "?", "UNREADABLE", true
	case !l.Active(cm.Now):
		mark, expires, bad = "✗", "EXPIRED "+kit.Span(cm.Now-l.ExpiresAt)+" ago", true
	}
	if !plain && bad {
		mark = cm.St.Bad.Render(mark)
	} else if !plain {
		mark = cm.St.Good.Render(mark)
	}
	b.WriteString(mark + " ")
	plan := termtext.Line(l.Rel)
	if len(plan) > c.plan {
		// Narrow: the plan's name says more than its lane.
		plan = kit.SlugOf(plan)
	}
	b.WriteString(kit.Fit(plan, c.plan) + " " + kit.Fit(kit.OwnerText(l), c.owner) + " ")
	if c.origin > 0 {
		b.WriteString(kit.Fit(termtext.Line(l.Origin), c.origin) + " ")
	}
	claimed := ""
	if l.Corrupt == "" {
		claimed = kit.Coarse(cm.Now-l.ClaimedAt) + " ago"
	}
	b.WriteString(kit.Fit(claimed, c.claimed) + " ")
	cell := kit.Fit(expires, c.expires)
	if !plain && bad {
		cell = cm.St.Bad.Render(cell)
	}
	b.WriteString(cell)
	return b.String()
}

// leaseKey is a lease's identity in the Leases pane: its file, or for a
// remote lease (which has none) its backend and plan.
func leaseKey(l *model.Lease) string {
	if kit.RemoteLease(l) {
		return l.Backend + ":" + l.Rel
	}
	return l.File
}

// open shows the selected lease: every field, then the file as it is.
func (l *Pane) open(pc *uictx.Ctx) tea.Msg {
	s := l.Selected()
	if s.Lease == nil {
		return nil
	}
	ls, t, now := *s.Lease, pc.Opt.Tree, pc.Now
	if kit.RemoteLease(&ls) {
		// Read already, with the view: nothing on disk to read.
		return uictx.Detail("lease:"+leaseKey(&ls), "lease · "+kit.SlugOf(ls.Rel)+kit.HeldOn(&ls), func() func(*uictx.Ctx) []string {
			return func(pc *uictx.Ctx) []string { return remoteLeaseDetail(pc, ls, now) }
		})
	}
	return uictx.Detail("lease:"+ls.File, "lease · "+ls.Rel, func() func(*uictx.Ctx) []string {
		raw, cut, err := t.ReadLeaseRaw(ls.File)
		return func(pc *uictx.Ctx) []string { return leaseDetail(pc.Common, ls, raw, cut, err, now) }
	})
}

func leaseDetail(c *uictx.Common, l model.Lease, raw []byte, cut bool, err error, now float64) []string {
	d := &uictx.DetailText{C: c}
	d.Heading("Lease")
	d.Field("file", planfs.Dir+"/.leases/"+l.File)
	d.Field("plan file", l.Rel)
	switch {
	case l.Corrupt != "":
		d.Field("state", "UNREADABLE: "+l.Corrupt)
	case !l.Active(now):
		d.Field("state", "EXPIRED "+kit.Span(now-l.ExpiresAt)+" ago")
	default:
		d.Field("state", "active, "+kit.TimeLeft(&l, now))
	}
	if l.Corrupt != "" && l.ModTime > 0 {
		// How old an unreadable lease is decides when recover may take it.
		d.Field("modified", uictx.Stamp(l.ModTime, now))
	}
	if l.Corrupt == "" {
		d.Heading("Anchor's fields")
		d.Field("plan", l.Plan)
		d.Field("agent_id", l.AgentID)
		d.Field("claimed_at", uictx.Stamp(l.ClaimedAt, now))
		d.Field("expires_at", uictx.Stamp(l.ExpiresAt, now))
		d.Field("origin", l.Origin)
		d.Heading("Fleetwatch's fields")
		d.Field("host", l.Host)
		d.Field("pid", kit.Itoa(l.PID))
		d.Field("pid_scope", l.PIDScope)
		d.Field("token", l.Token)
		d.ExtraFields(raw, "plan", "agent_id", "claimed_at", "expires_at", "origin", "host", "pid", "pid_scope", "token")
	}
	d.Heading("On disk")
	switch {
	case err != nil:
		d.Note("cannot read it: " + err.Error())
	default:
		d.RawJSON(raw)
		if cut {
			d.Note("… only the first 64 KiB are shown")
		}
	}
	return d.Lines
}

// remoteLeaseDetail is a remote lease read whole: where the backend keeps
// it, who holds it where, and the lease as the backend holds it.
func remoteLeaseDetail(pc *uictx.Ctx, l model.Lease, now float64) []string {
	d := &uictx.DetailText{C: pc.Common}
	d.Heading("Remote lease")
	where := claims.KeptIn(l.Backend, kit.SlugOf(l.Rel))
	if pc.Claims != nil {
		where += " · " + pc.Claims.Where
	}
	d.Field("kept in", where)
	d.Field("plan file", l.Origin+" (shown in progress)")
	d.Field("held by", kit.OwnerText(&l))
	if l.Active(now) {
		d.Field("state", "active, "+kit.TimeLeft(&l, now))
	} else {
		d.Field("state", "EXPIRED "+kit.Span(now-l.ExpiresAt)+" ago (R takes it over)")
	}
	if v := pc.View; v != nil {
		d.Field("read", kit.ReadAge(now-kit.UnixOf(v.ReadAt))+" ago")
		if rl := v.Lease(kit.SlugOf(l.Rel)); rl != nil && rl.Need > 0 {
			d.Field("seen unchanged", kit.Span(rl.SeenFor.Seconds())+" of the "+kit.Span(rl.Need.Seconds())+" a takeover needs")
		}
	}
	d.Heading("Fields")
	d.Field("agent_id", l.AgentID)
	d.Field("host", l.Host)
	d.Field("pid", kit.Itoa(l.PID))
	d.Field("claimed_at", uictx.Stamp(l.ClaimedAt, now))
	d.Field("token", l.Token)
	d.Field("epoch", strconv.FormatInt(l.Epoch, 10))
	d.Field("ttl", kit.Span(l.TTL))
	return d.Lines
}
