package ui

import (
	"io"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/notify"
)

// bellEvery is the least time between two bells: a burst of notices rings
// once, and a flapping fact cannot make the terminal ring on and on.
const bellEvery = 10 * time.Second

// noticesKept bounds the list; an operator reads the newest.
const noticesKept = 200

// noticeBook is what this session noticed: the facts that need a person,
// newest first, which of them were read, and when the bell last rang.
type noticeBook struct {
	list []noticeEntry
	// last is every notice true at the last look; a notice is new when
	// its ID was not there.
	last []model.Notice
	// The first look is the baseline (what is true when the UI opens is
	// not news); it waits for the board, the workers and the inbox,
	// because whether an expired lease has a driver needs the first two,
	// and a proposal waiting when the UI opens is not news either.
	haveBoard, haveWorkers, haveInbox, primed bool
	lastBell                                  time.Time
}

type noticeEntry struct {
	model.Notice
	read bool
}

// noticeSource says which reading a look follows.
type noticeSource int

const (
	fromBoard noticeSource = iota
	fromWorkers
	fromClock
	fromInbox
	fromMerge
)

func (b *noticeBook) unread() int {
	n := 0
	for i := range b.list {
		if !b.list[i].read {
			n++
		}
	}
	return n
}

func (b *noticeBook) markRead() {
	for i := range b.list {
		b.list[i].read = true
	}
}

// add puts fresh notices on top. A fact that was true, went away and came
// back (a plan sent back to review) is one entry, moved up and unread.
func (b *noticeBook) add(fresh []model.Notice) {
	ids := make(map[string]bool, len(fresh))
	top := make([]noticeEntry, 0, len(fresh)+len(b.list))
	// Within one look, the order Conditions gives.
	for _, n := range fresh {
		ids[n.ID] = true
		top = append(top, noticeEntry{Notice: n})
	}
	for _, e := range b.list {
		if !ids[e.ID] {
			top = append(top, e)
		}
	}
	b.list = top[:min(len(top), noticesKept)]
}

// lookForNotices compares the facts now with the last look's, after the
// reading from src, and rings the bell for what is new.
func (m *Model) lookForNotices(src noticeSource) tea.Cmd {
	b := &m.notes
	switch src {
	case fromBoard:
		b.haveBoard = true
	case fromWorkers:
		b.haveWorkers = true
	case fromInbox:
		b.haveInbox = true
	}
	if m.d == nil || !b.haveBoard || !b.haveWorkers || !b.haveInbox {
		return nil
	}
	cur := model.Conditions(m.noticeFacts())
	fresh := model.NewNotices(b.last, cur)
	b.last = cur
	if m.Opt.Notify != nil {
		m.Opt.Notify(cur)
	}
	if !b.primed {
		b.primed = true
		return nil
	}
	if len(fresh) == 0 {
		return nil
	}
	b.add(fresh)
	if _, open := find[*noticeList](m.stack); open {
		b.markRead() // shown as it arrives
	}
	return m.bellCmd()
}

// noticeFacts is the board, the leases, the workers, the inbox, the radar
// and the event log as shown now, as notify.Facts reads them for the
// headless watcher too.
func (m *Model) noticeFacts() model.NoticeFacts {
	r := notify.Reading{Board: m.d.Board, Inbox: m.inboxNow.Entries, Overlaps: m.wrk.overlaps, Gate: m.merge.listing.Notices,
		Events: m.d.Events, Commits: m.d.Commits, StuckAfter: m.Opt.StuckAfter, Now: m.Now, Endpoints: m.fleetData.Endpoints}
	for i := range m.wrk.rows {
		w := notify.WorkerFact(&m.wrk.rows[i].St, m.wrk.rows[i].Health)
		w.Agent = m.wrk.rows[i].Key() // "agent on host" for another machine's worker
		r.Workers = append(r.Workers, w)
	}
	return notify.Facts(r)
}

// bellCmd rings the terminal's bell (BEL to the program's output, which
// tmux and terminals see even in the alternate screen), at most once every
// bellEvery by the tree's clock; nil when it must not ring.
func (m *Model) bellCmd() tea.Cmd {
	out := m.Opt.Out
	if m.Opt.NoBell || out == nil {
		return nil
	}
	now := m.Opt.Tree.Now()
	// A clock set back (a test's, or the machine's) does not silence it.
	if last := m.notes.lastBell; !last.IsZero() && now.Sub(last) < bellEvery && !now.Before(last) {
		return nil
	}
	m.notes.lastBell = now
	// One byte in a write of its own: the renderer writes each frame in
	// one call too, so the BEL never lands inside an escape sequence.
	return func() tea.Msg {
		_, _ = io.WriteString(out, "\a")
		return nil
	}
}

// noticeCount is the header's mark for unread notices, or "".
func (m *Model) noticeCount() string {
	n := m.notes.unread()
	if n == 0 {
		return ""
	}
	mark := "⚑ " + kit.Itoa(n)
	if !m.Plain {
		mark = m.St.Warn.Render(mark)
	}
	return " · " + mark
}

// openNotices is N: the list, newest first; opening it reads them.
func (m *Model) openNotices() tea.Cmd {
	m.notes.markRead()
	m.stack.push(&noticeList{})
	return nil
}

// noticeList is the N overlay: the notices, newest first; enter leads to
// the row one is about. offset is the first row shown.
type noticeList struct{ cursor, offset int }

func (*noticeList) asks() bool   { return false }
func (*noticeList) typing() bool { return false }

// noticeRows is how many notices the overlay shows in a body h high,
// under its title.
func noticeRows(h int) int { return max(1, h-1) }

func (l *noticeList) key(m *Model, msg tea.KeyMsg) tea.Cmd {
	k := &m.Keys
	n, page := len(m.notes.list), noticeRows(m.Height-2)
	switch {
	case key.Matches(msg, k.Interrupt):
		return m.quit()
	case key.Matches(msg, k.Close, k.Notices):
		m.stack.remove(l)
		m.notes.markRead()
	case key.Matches(msg, k.Ask.Confirm):
		m.stack.remove(l)
		m.notes.markRead()
		if l.cursor < n {
			return m.leadTo(m.notes.list[l.cursor].Notice)
		}
	}
	if d, ok := k.Step(msg, page, n); ok {
		l.cursor += d
	}
	l.cursor = max(0, min(n-1, l.cursor))
	l.offset = max(min(l.offset, l.cursor), l.cursor-page+1)
	return nil
}

// view draws the title, the visible notices and a line of keys; only the
// rows in the window are rendered.
func (l *noticeList) view(m *Model, h int) []string {
	list := m.notes.list
	title := "Notices · " + kit.Itoa(len(list)) + " (newest first)"
	out := []string{title}
	if len(list) == 0 {
		return append(out, "", "no notices: a plan reaching review-needed, a proposal waiting for approval,",
			"a run paused at its budget, a worker failing, going stale or leaving its scope,",
			"two workers touching the same files, a lease expiring with no worker driving it,",
			"a plan stuck with no commit, a landing refused, or the merge queue's gate not as",
			"it left it shows here, with a bell (and where notify: sends it)")
	}
	rows := noticeRows(h)
	cur := min(l.cursor, len(list)-1)
	// Notices arrive on top while the list is open; the window still
	// holds the cursor.
	off := max(0, min(l.offset, cur), cur-rows+1)
	for i := off; i < len(list) && i < off+rows; i++ {
		out = append(out, m.noticeLine(&list[i].Notice, i == cur))
	}
	return out
}

// noticesHelp is the footer's keys while the list is shown: only the ones
// that work there.
func (m *Model) noticesHelp() string {
	k := &m.Keys
	enter := key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "go to it"))
	return m.Help.ShortHelpView([]key.Binding{enter, k.Up, k.Down, k.Close})
}

func (m *Model) noticeLine(n *model.Notice, selected bool) string {
	at := time.Unix(int64(n.At), 0).Local().Format("15:04:05")
	kind := kit.Fit(string(n.Kind), 8)
	if !selected && !m.Plain {
		kind = m.St.Warn.Render(kind)
	}
	line := kit.Gutter(selected) + at + "  " + kind + " " + termtext.Line(n.Text)
	return m.finish(kit.Fit(line, m.Cols), selected)
}

// leadTo shows the row a notice is about: its pane, and there its row
// (for a plan, the lane it is in now). A row that is gone says so.
func (m *Model) leadTo(n model.Notice) tea.Cmd {
	switch {
	case n.Kind == model.NoticeProposal:
		// The inbox is where it is decided.
		cmd := m.setPane(inboxPane)
		if !m.paneOf(inboxPane).List().GoTo(kit.SlugOf(n.Key)) {
			m.setStatus("✗ "+kit.SlugOf(n.Key)+" no longer waits in the inbox", true)
		}
		m.syncKeys()
		return cmd
	case n.Subject == model.SubjectGate:
		return m.setPane(mergePane)
	case n.Kind == model.NoticeReview:
		return m.leadToCandidate(n.Key)
	case n.Subject == model.SubjectPlan:
		return m.leadToPlan(n.Key)
	case n.Subject == model.SubjectLease:
		cmd := m.setPane(leasesPane)
		if !m.paneOf(leasesPane).List().GoTo(n.Key) {
			m.setStatus("✗ "+n.Key+" is gone: the lease was released or recovered", true)
		}
		m.syncKeys()
		return cmd
	case n.Subject == model.SubjectWorker:
		cmd := m.setPane(workersPane)
		if !m.paneOf(workersPane).List().GoTo(n.Key) {
			m.setStatus("✗ "+n.Key+" no longer shows: its state file is gone", true)
		}
		m.syncKeys()
		return cmd
	}
	return nil
}

func (m *Model) leadToPlan(rel string) tea.Cmd {
	m.pane = plansPane
	now := ""
	if m.d != nil {
		now = placeIn(m.d.Rels, rel)
	}
	if now == "" {
		m.syncKeys()
		m.setStatus("✗ "+kit.SlugOf(rel)+" is gone from the tree", true)
		return m.schedulePreview()
	}
	p := plansOf(m)
	p.ShowLane(model.Rel(now).Lane())
	p.Rebuild(m.ctx())
	if !p.GoTo(now) && p.Input.Value() != "" {
		// The filter hides it: the operator asked for this plan.
		p.Input.SetValue("")
		p.Rebuild(m.ctx())
		p.GoTo(now)
	}
	m.syncKeys()
	return m.schedulePreview()
}

// finish highlights a selected row across the whole table width.
func (m *Model) finish(line string, selected bool) string {
	if !selected {
		return line
	}
	return m.Highlight(kit.Fit(line, m.tableWidth()))
}
