package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers"
)

// leaseList is the Leases pane: every lease file, as an operator triages.
type leaseList struct {
	kit.Table
	kit.Filter
	rows []model.Lease
	cols leaseCols
}

func (l *leaseList) Rebuild(pc *uictx.Ctx) {
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
	l.SetShared(keys, rowsOf{pane: leasesPane, d: pc.D, needle: f, cols: c}, func(i int, sel bool) string {
		return leaseLine(cm, &l.rows[i], c, sel)
	})
}

func (l *leaseList) Selected() uictx.Selection {
	if l.Cursor >= len(l.rows) {
		return uictx.Selection{}
	}
	lease := &l.rows[l.Cursor]
	return uictx.Selection{Rel: lease.Rel, Lease: lease}
}

func (l *leaseList) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	here := pc.Shown == leasesPane
	release, recover := releaseRecover(pc)
	set(&pc.Keys.Leases.Release, here && release, "release: select a plan with a lease (u returns one without)")
	set(&pc.Keys.Leases.Recover, here && recover, "recover: select an expired, unreadable or left-over lease")
	set(&pc.Keys.Leases.Open, here && l.Cursor < len(l.rows), "open: select a lease in the leases pane (2)")
}

func (l *leaseList) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	k := &pc.Keys.Leases
	switch {
	case key.Matches(msg, k.Release):
		return askRelease(pc), true
	case key.Matches(msg, k.Recover):
		return askRecover(pc), true
	case key.Matches(msg, k.Open):
		return l.open(pc), true
	}
	return nil, false
}

func (l *leaseList) View(pc *uictx.Ctx, h int) []string {
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
		plan, owner = max(plan, kit.CellWidth(l.Rel)), max(owner, kit.CellWidth(ownerText(l)))
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

// leaseLine is a lease's row, not yet highlighted (finish, table.go).
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
	b.WriteString(kit.Fit(plan, c.plan) + " " + kit.Fit(ownerText(l), c.owner) + " ")
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
	if remoteLease(l) {
		return l.Backend + ":" + l.Rel
	}
	return l.File
}

// ownerText is a lease's owner as the tables show it.
func ownerText(l *model.Lease) string { return termtext.Line(l.AgentID) + heldOn(l) }

// open shows the selected lease: every field, then the file as it is.
func (l *leaseList) open(pc *uictx.Ctx) tea.Msg {
	s := l.Selected()
	if s.Lease == nil {
		return nil
	}
	ls, t, now := *s.Lease, pc.Opt.Tree, pc.Now
	if remoteLease(&ls) {
		// Read already, with the view: nothing on disk to read.
		return uictx.Detail("lease:"+leaseKey(&ls), "lease · "+kit.SlugOf(ls.Rel)+heldOn(&ls), func() func(*uictx.Ctx) []string {
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
		d.Field("state", "active, "+timeLeft(&l, now))
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
	where := l.Backend
	if l.Backend == "git" {
		where = "git ref refs/fleetwatch/leases/" + kit.SlugOf(l.Rel)
	}
	if pc.Claims != nil {
		where += " · " + pc.Claims.Where
	}
	d.Field("kept in", where)
	d.Field("plan file", l.Origin+" (shown in progress)")
	d.Field("held by", ownerText(&l))
	if l.Active(now) {
		d.Field("state", "active, "+timeLeft(&l, now))
	} else {
		d.Field("state", "EXPIRED "+kit.Span(now-l.ExpiresAt)+" ago (R takes it over)")
	}
	if v := pc.View; v != nil {
		d.Field("read", readAge(now-unixOf(v.ReadAt))+" ago")
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

// timeLeft is how long an active lease still runs, "12m left", or for an
// inbox-held one, which never runs out, what it waits for.
func timeLeft(l *model.Lease, now float64) string {
	if w := l.AwaitingText(); w != "" {
		return w
	}
	return kit.Span(l.ExpiresAt-now) + " left"
}

// releaseRecover says whether r and R apply to the selection. The Plans
// pane offers both too, for the selected plan.
func releaseRecover(pc *uictx.Ctx) (release, recover bool) {
	rel, lease := pc.Target.Rel, pc.Target.Lease
	lane := model.Rel(rel).Lane()
	exists := rel != "" && pc.D.Has(rel)
	return exists && lane == model.InProgress && lease != nil, lease != nil && (!lease.Active(pc.Now) || !exists)
}

func askRelease(pc *uictx.Ctx) tea.Msg {
	rel, lease := pc.Target.Rel, pc.Target.Lease
	body := []string{"Give up the claim on " + rel + "; the plan goes back to the lane it came from.",
		holder(pc.Common, lease)}
	body = append(body, takes(pc.Common, lease, "Releasing")...)
	t, agent, force := pc.Opt.Tree, pc.Opt.Agent, force(pc.Common, lease, model.InProgress)
	return uictx.AskReq{Q: uictx.Question{Title: "Release " + kit.SlugOf(rel), Body: body, Verb: "release"}, Rel: rel, Lease: lease,
		Verb: model.Release, Local: func(model.Lane, string) tea.Cmd { return releaseCmd(t, rel, agent, force) }}
}

func askRecover(pc *uictx.Ctx) tea.Msg {
	rel, lease := pc.Target.Rel, pc.Target.Lease
	lane := model.Rel(rel).Lane()
	t, agent, ttl := pc.Opt.Tree, pc.Opt.Agent, pc.Opt.TTL
	if !pc.D.Has(rel) && pc.Claims != nil {
		return uictx.Status("✗ recover: no plan at "+rel+" on the remote branch; a left-over remote lease is the backend's to clear (work-once --recover)", true)
	}
	if !pc.D.Has(rel) {
		return uictx.AskReq{Q: uictx.Question{
			Title: "Remove a left-over lease",
			Body: []string{"No plan is at " + rel + " any more; this lease is left over from a claim. " + holder(pc.Common, lease),
				"Remove it with the repair every work-once run does."},
			Verb: "repair",
			Do:   func(model.Lane, string) tea.Cmd { return repairCmd(t) },
		}, Rel: rel, Lease: lease}
	}
	body := []string{holder(pc.Common, lease)}
	if lane == model.InProgress {
		body = append(body, "You ("+pc.Opt.Agent+") take the lease over for "+kit.Span(pc.Opt.TTL)+"; then r releases the plan or c completes it.")
	} else {
		body = append(body, "The stale lease is dropped, so agents can pick "+rel+" again.")
	}
	return uictx.AskReq{Q: uictx.Question{Title: "Recover " + kit.SlugOf(rel), Body: body, Verb: "recover"}, Rel: rel, Lease: lease,
		Verb: model.Recover, Local: func(model.Lane, string) tea.Cmd { return recoverCmd(t, rel, agent, ttl) }}
}

func releaseCmd(t *planfs.Tree, rel, agent string, force bool) tea.Cmd {
	return actionCmd("release", func() (string, error) {
		dst, err := t.Release(rel, planfs.Actor{AgentID: agent, Force: force})
		return "released " + kit.SlugOf(rel) + " → " + kit.LaneOf(dst), err
	})
}

func recoverCmd(t *planfs.Tree, rel, agent string, ttl float64) tea.Cmd {
	return actionCmd("recover", func() (string, error) {
		l, err := workers.Recover(t, rel, planfs.Actor{AgentID: agent}, ttl)
		if l == nil {
			return "recovered " + kit.SlugOf(rel) + ": its stale lease is gone", err
		}
		return "recovered " + kit.SlugOf(rel) + ": now held by " + agent + " for " + kit.Span(ttl) + " (r releases it)", err
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
