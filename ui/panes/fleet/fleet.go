// Package fleet is the cockpit's Fleet pane: what the fleet spends and what
// it delivers, as ledger.ReadFleet reads it (uictx.Ctx.Fleet) — today's
// spend against each daily budget as bars, the endpoints in trouble, each
// tier's outcomes over the last week with bar charts of cost and
// landings, and what the running runs have spent so far (Ctx.Running).
package fleet

import (
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/spend"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
	"github.com/fleetwatch/fleetwatch/workers/ledger"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// Pane is the Fleet pane: the last reading, and the lines drawn from
// it at the pane's width (rows of the tier table are the table's).
type Pane struct {
	kit.Table
	kit.Filter
	id     uictx.PaneID   // its place in the tab order
	data   uictx.FleetMsg // the reading the rows were drawn from (uictx.Ctx.Fleet)
	loaded bool           // there was one
	shown  []int          // the tiers the filter lets through
	tierW  int            // the tier column's width
	// Drawn on rebuild, sliced by view: the budgets (and a fleet-wide
	// stop), the endpoints' states, the two charts, and the running
	// workers' spend.
	gauges, endpoints, charts, running []string
	full                               int // the rows the pane has
}

func (l *Pane) SetSize(w, h int) {
	l.full = h
	l.Table.SetSize(w, max(1, min(len(l.shown), h/3)))
}

// New is the Fleet pane at id in the tab order.
func New(id uictx.PaneID) uictx.Pane { return &Pane{id: id} }

func (l *Pane) Rebuild(pc *uictx.Ctx) {
	l.data, l.loaded = uictx.FleetMsg{}, pc.Fleet != nil
	if l.loaded {
		l.data = *pc.Fleet
	}
	f := l.Needle()
	tiers := l.data.Fleet.Tiers
	l.shown = l.shown[:0]
	keys := []string{}
	for i := range tiers {
		if f == "" || kit.AnyContains(f, tiers[i].Key) {
			l.shown = append(l.shown, i)
			keys = append(keys, tiers[i].Key)
		}
	}
	l.tierW = len("tier")
	for _, i := range l.shown {
		l.tierW = min(24, max(l.tierW, kit.CellWidth(tiers[i].Key)))
	}
	l.SetSize(l.Width, l.full)
	inner := l.Width
	if pc.Wide {
		inner -= 2 // the boxes' edges
	}
	l.gauges = l.gaugeLines(pc.Common, inner)
	l.endpoints = endpointLines(pc.Common, l.data, pc.Opt.Tree.Now())
	l.charts = l.chartLines(pc.Common, inner)
	l.running = runningLines(pc.Common, pc.Running)
	tw, wide := l.tierW, pc.Wide
	l.Set(keys, func(i int, sel bool) string {
		return tierLine(&l.data.Fleet.Tiers[l.shown[i]], tw, wide, sel)
	})
}

// bar is share of w cells filled, coloured by how near the budget is; the
// percentage beside it says the same without colour.
func bar(cm *uictx.Common, share float64, w int) string {
	n := int(math.Round(min(1, max(0, share)) * float64(w)))
	fill, rest := strings.Repeat("█", n), strings.Repeat("░", w-n)
	if cm.Plain {
		return fill + rest
	}
	st := cm.St.Good
	switch {
	case share >= 1:
		st = cm.St.Bad
	case share >= 0.8:
		st = cm.St.Warn
	}
	return st.Render(fill) + cm.St.Dim.Render(rest)
}

// gaugeLines are today's spend, each budget as a bar, and a fleet-wide
// stop; or what to do when there are no budgets.
func (l *Pane) gaugeLines(cm *uictx.Common, w int) []string {
	f := &l.data.Fleet
	today := f.Today.String()
	if f.Today == (ledger.Totals{}) {
		today = cm.St.Dim.Render("no run recorded today")
	}
	out := []string{cm.St.Title.Render("Today") + "  " + today}
	switch {
	case l.data.Err != nil:
		// What was read before the error may be partial: say so first.
		p := "⚠ cannot read the spend: " + termtext.Line(cm.ProjectRel(l.data.Err.Error()))
		if !cm.Plain {
			p = cm.St.Bad.Render(p)
		}
		out = append(out, p)
	case len(f.Gauges) == 0 && l.loaded:
		out = append(out, "  "+cm.St.Dim.Render("no budgets: set budgets: in fleetwatch.yaml (fleetwatch help spend)"))
	}
	// One bar width for all, so the bars compare at a glance.
	what, tailW := 0, 0
	tails := make([]string, len(f.Gauges))
	for i, g := range f.Gauges {
		tails[i] = fmt.Sprintf(" %4.0f%%  ", g.Share()*100) + g.Spent.String() + " of " + g.Limit.String()
		what, tailW = max(what, kit.CellWidth(g.What)), max(tailW, kit.CellWidth(tails[i]))
	}
	what = min(what, 28)
	bw := max(8, min(40, w-2-what-1-tailW))
	for i, g := range f.Gauges {
		out = append(out, "  "+kit.Fit(termtext.Line(g.What), what)+" "+bar(cm, g.Share(), bw)+termtext.Line(tails[i]))
	}
	if f.Problem != "" {
		p := "⚠ claims stopped: " + termtext.Line(f.Problem)
		if !cm.Plain {
			p = cm.St.Bad.Render(p)
		}
		out = append(out, p)
	}
	return out
}

// chartLines are the tiers' cost and landings as two bar charts side by
// side, each scaled to its largest.
func (l *Pane) chartLines(cm *uictx.Common, w int) []string {
	if len(l.shown) == 0 {
		return nil
	}
	tiers := l.data.Fleet.Tiers
	half := w / 2
	var maxCost float64
	maxLanded := 0
	for _, i := range l.shown {
		maxCost, maxLanded = max(maxCost, tiers[i].CostUSD), max(maxLanded, tiers[i].Landed)
	}
	chart := func(label string, share float64, value string) string {
		bw := max(4, min(40, half-2-l.tierW-1-9-1))
		n := int(math.Round(share * float64(bw)))
		b := strings.Repeat("▇", n) + strings.Repeat(" ", bw-n)
		if !cm.Plain {
			b = cm.St.Info.Render(b)
		}
		return kit.Fit("  "+kit.Fit(termtext.Line(label), l.tierW)+" "+b+" "+kit.FitRight(value, 9), half)
	}
	out := []string{kit.Fit(cm.St.Title.Render("Cost per tier"), half) + cm.St.Title.Render("Landed per tier")}
	for _, i := range l.shown {
		t := &tiers[i]
		cost, landed := 0.0, 0.0
		if maxCost > 0 {
			cost = t.CostUSD / maxCost
		}
		if maxLanded > 0 {
			landed = float64(t.Landed) / float64(maxLanded)
		}
		out = append(out, chart(t.Key, cost, kit.USD(t.CostUSD))+chart(t.Key, landed, kit.Itoa(t.Landed)))
	}
	return out
}

// runningLines are the running workers' runs and what each has spent so
// far, paused ones marked.
func runningLines(cm *uictx.Common, runs []look.State) []string {
	var out []string
	for i := range runs {
		st := &runs[i]
		line := "  " + termtext.Line(st.AgentID) + " · " + termtext.Line(kit.PlanSlug(st.Plan)) + " · " + st.Spent.String()
		if st.Paused != "" {
			line += " · " + pausedMark(cm, st.Paused)
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		out = append(out, "  "+cm.St.Dim.Render("no run is running"))
	}
	return out
}

// pausedMark is a paused run's mark with its reason.
func pausedMark(cm *uictx.Common, why string) string {
	mark := "⏸ paused: " + termtext.Line(why)
	if !cm.Plain {
		mark = cm.St.Warn.Render(mark)
	}
	return mark
}

// fleetCol is a column of the tier table; wide ones show from 100
// columns on.
type fleetCol struct {
	head string
	w    int
	wide bool
	cell func(l *ledger.Line) string
}

var fleetCols = []fleetCol{
	{"runs", 5, false, func(l *ledger.Line) string { return kit.Itoa(l.Runs) }},
	{"plans", 5, true, func(l *ledger.Line) string { return kit.Itoa(l.Plans) }},
	{"landed", 6, false, func(l *ledger.Line) string { return kit.Itoa(l.Landed) }},
	{"cost", 9, false, func(l *ledger.Line) string { return kit.USD(l.CostUSD) }},
	{"$/landed", 9, false, func(l *ledger.Line) string { return perLanded(l, kit.USD(l.CostPerLanded)) }},
	{"tok/land", 8, false, func(l *ledger.Line) string { return perLanded(l, spend.FormatTokens(l.TokensPerLanded)) }},
	{"1st ok", 6, false, func(l *ledger.Line) string { return rate(l.FirstCheckPass, l.Checked) }},
	{"needs-work", 10, false, func(l *ledger.Line) string { return rate(l.NeedsWorkRate, l.Reviewed) }},
	{"sent back", 9, true, func(l *ledger.Line) string { return rate(l.SendBackRate, l.Reviewed) }},
	{"scope ✗", 7, true, func(l *ledger.Line) string { return kit.Itoa(l.ScopeViolations) }},
	{"to land", 7, false, func(l *ledger.Line) string {
		if l.MedianToLand <= 0 {
			return "—"
		}
		return kit.Span(l.MedianToLand)
	}},
}

// perLanded is s, or a dash when nothing landed.
func perLanded(l *ledger.Line, s string) string {
	if l.Landed == 0 {
		return "—"
	}
	return s
}

// rate is r as a percentage of n plans, a dash when there were none.
func rate(r float64, n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f%%", r*100)
}

func fleetHeader(tierW int, wide bool) string {
	h := "  " + kit.Fit("tier", tierW)
	for _, c := range fleetCols {
		if !c.wide || wide {
			h += " " + kit.FitRight(c.head, c.w)
		}
	}
	return h
}

// tierLine is a tier's row, not yet highlighted (kit.Table highlights the selected one).
func tierLine(t *ledger.Line, tierW int, wide, selected bool) string {
	var b strings.Builder
	b.WriteString(kit.Gutter(selected) + kit.Fit(termtext.Line(t.Key), tierW))
	for _, c := range fleetCols {
		if !c.wide || wide {
			b.WriteString(" " + kit.FitRight(c.cell(t), c.w))
		}
	}
	return b.String()
}

func (l *Pane) Selected() uictx.Selection { return uictx.Selection{} }

func (l *Pane) SyncKeys(pc *uictx.Ctx, set uictx.SetKey) {
	set(&pc.Keys.Fleet.Open, pc.Shown == l.id && l.Cursor < len(l.shown), "open: select a tier in the fleet pane (8)")
}

func (l *Pane) Update(pc *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	if key.Matches(msg, pc.Keys.Fleet.Open) {
		return l.open(), true
	}
	return nil, false
}

// open shows the selected tier's whole line of the report.
func (l *Pane) open() tea.Msg {
	if l.Cursor >= len(l.shown) {
		return nil
	}
	t := l.data.Fleet.Tiers[l.shown[l.Cursor]]
	since := l.data.Fleet.Since
	return uictx.Detail("tier:"+t.Key, "tier · "+t.Key, func() func(*uictx.Ctx) []string {
		return func(pc *uictx.Ctx) []string {
			return tierDetail(pc.Common, t, since.Local().Format("2006-01-02 15:04"))
		}
	})
}

func tierDetail(cm *uictx.Common, t ledger.Line, since string) []string {
	d := &uictx.DetailText{C: cm}
	d.Heading("Tier " + t.Key + " since " + since)
	d.Field("runs", kit.Itoa(t.Runs))
	d.Field("plans", kit.Itoa(t.Plans))
	d.Field("landed", kit.Itoa(t.Landed))
	d.Field("spent", ledger.Totals{Tokens: t.Tokens, USD: t.CostUSD}.String())
	// Labels of at most 15 cells: the detail's label column.
	d.Field("per landed", perLanded(&t, spend.FormatTokens(t.TokensPerLanded)+" tokens, "+kit.USD(t.CostPerLanded)))
	d.Field("1st checks ok", rate(t.FirstCheckPass, t.Checked)+" of "+kit.Plural(t.Checked, "plan", "plans")+" checked")
	d.Field("needs work", rate(t.NeedsWorkRate, t.Reviewed)+" of "+kit.Plural(t.Reviewed, "plan", "plans")+" reviewed")
	d.Field("sent back", rate(t.SendBackRate, t.Reviewed)+" (by the operator)")
	d.Field("out of scope", kit.Plural(t.ScopeViolations, "violation", "violations"))
	d.Field("median to land", fleetCols[len(fleetCols)-1].cell(&t)+" (first claim to landing)")
	d.Field("said done, ✗", kit.Plural(t.SaidDoneFailed, "run", "runs")+" said done and the checks then failed")
	return d.Lines
}

func (l *Pane) View(pc *uictx.Ctx, h int) []string {
	empty := "no runs recorded yet: a run's usage lands in var/fleet/usage/runs.jsonl when it ends"
	switch {
	case !l.loaded:
		empty = "reading the ledger…"
	case l.data.Err != nil:
		empty = "⚠ fleet: " + termtext.Line(pc.ProjectRel(l.data.Err.Error()))
	}
	header := fleetHeader(l.tierW, pc.Wide)
	tableH := l.Table.Height + 1
	if !pc.Wide {
		out := append([]string{}, l.gauges...)
		if len(l.endpoints) > 0 {
			out = append(append(out, "", pc.St.Title.Render("Endpoints · now")), l.endpoints...)
		}
		out = append(out, "", pc.St.Title.Render(kit.FilterTitle("Tiers · last 7 days", &l.Filter)))
		out = append(out, pc.TableBox("", header, &l.Table, tableH, kit.EmptyText(&l.Filter, empty))...)
		if len(l.charts) > 0 {
			out = append(append(out, ""), l.charts...)
		}
		out = append(append(out, "", pc.St.Title.Render("Running")), l.running...)
		return out[:min(len(out), h)]
	}
	out := pc.Box("Budgets · today", "", l.gauges, pc.Cols, len(l.gauges)+2, false)
	if len(l.endpoints) > 0 {
		out = append(out, pc.Box("Endpoints · now", "", l.endpoints, pc.Cols, len(l.endpoints)+2, false)...)
	}
	out = append(out, pc.TableBox(kit.FilterTitle("Tiers · last 7 days", &l.Filter), header, &l.Table, tableH+2, kit.EmptyText(&l.Filter, empty))...)
	if len(l.charts) > 0 {
		out = append(out, pc.Box("Cost and landings per tier", "", l.charts, pc.Cols, len(l.charts)+2, false)...)
	}
	rest := max(3, min(len(l.running)+2, h-len(out)))
	out = append(out, pc.Box("Running · spent so far", "", l.running, pc.Cols, rest, false)...)
	return out[:min(len(out), h)]
}
