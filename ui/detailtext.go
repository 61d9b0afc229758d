package ui

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"fleetwatch/internal/termtext"
	"fleetwatch/model"
	"fleetwatch/planfs"
	"fleetwatch/workers"
)

// detailText gathers a detail's lines: headings, label and value pairs,
// and blocks of text (raw JSON, git's output) shown line by line.
type detailText struct {
	m     *Model
	lines []string
}

func (d *detailText) heading(s string) {
	if len(d.lines) > 0 {
		d.lines = append(d.lines, "")
	}
	d.lines = append(d.lines, d.m.st.Title.Render(s))
}

// field is one label and its value; the value is made safe here.
func (d *detailText) field(label, value string) {
	d.lines = append(d.lines, "  "+d.m.st.Dim.Render(fit(label, 15))+" "+termtext.Line(value))
}

// block is text of many lines, each made safe.
func (d *detailText) block(text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		d.lines = append(d.lines, "  "+d.m.st.Dim.Render("(empty)"))
		return
	}
	for _, l := range strings.Split(text, "\n") {
		d.lines = append(d.lines, "  "+termtext.Line(strings.TrimSuffix(l, "\r")))
	}
}

func (d *detailText) note(s string) {
	d.lines = append(d.lines, "  "+d.m.st.Dim.Render(termtext.Line(s)))
}

// stamp shows a Unix time as its number, the local time, and how far from
// now it is.
func stamp(sec, now float64) string {
	if sec == 0 {
		return "0 (none)"
	}
	at := time.Unix(0, int64(sec*1e9)).Local()
	s := strconv.FormatFloat(sec, 'f', -1, 64) + " · " + at.Format("2006-01-02 15:04:05 MST")
	if sec > now {
		return s + " · in " + span(sec-now)
	}
	return s + " · " + span(now-sec) + " ago"
}

// rawJSON shows a file's bytes: indented when they parse, as they are
// (made safe) when not.
func (d *detailText) rawJSON(raw []byte) {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") == nil {
		d.block(buf.String())
		return
	}
	d.note("not valid JSON; the bytes as they are:")
	d.block(termtext.Block(strings.ToValidUTF8(string(raw), "?")))
}

// extraFields lists the top-level keys of raw that known does not name.
func (d *detailText) extraFields(raw []byte, known ...string) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return
	}
	var extra []string
	for k := range fields {
		if !slices.Contains(known, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return
	}
	slices.Sort(extra)
	d.heading("Other fields")
	for _, k := range extra {
		d.field(k, string(fields[k]))
	}
}

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

// openTree shows the selected worktree as git sees it now.
func (m *Model) openTree() tea.Cmd {
	t := &m.trees
	if t.cursor >= len(t.rows) {
		return nil
	}
	agent, project := t.rows[t.cursor].AgentID, m.opt.Tree.Project
	return m.openDetail("tree:"+agent, "worktree · "+agent, func() func(*Model) []string {
		w, err := workers.ReadWorktreeDetail(project, agent)
		return func(m *Model) []string { return treeDetail(m, w, err) }
	})
}

func treeDetail(m *Model, w workers.WorktreeDetail, err error) []string {
	d := &detailText{m: m}
	d.heading("Worktree")
	if err != nil {
		d.note(m.projectRel(err.Error()))
		return d.lines
	}
	d.field("agent", w.AgentID)
	d.field("path", m.projectRel(w.Path))
	d.field("branch", w.Branch)
	if w.Head != "" && w.Head != w.Branch {
		d.field("checked out", w.Head)
	}
	port := "none"
	if w.Port > 0 {
		port = itoa(w.Port)
	}
	d.field("port", port)
	switch {
	case !w.Exists:
		d.note("the folder is gone; the registry still names it")
		return d.lines
	case w.Err != "":
		d.field("git", m.projectRel(w.Err))
	default:
		d.field("integration", w.Base)
		d.field("ahead/behind", itoa(w.Ahead)+" ahead, "+itoa(w.Behind)+" behind "+w.Base)
	}
	d.heading("git status --short --branch")
	d.gitOut(w.Status, w.StatusErr)
	d.heading("git log --oneline -n 10")
	d.gitOut(w.Log, w.LogErr)
	return d.lines
}

func (d *detailText) gitOut(out, err string) {
	if err != "" {
		d.note(d.m.projectRel(err))
		return
	}
	d.block(out)
}

// projectRel takes the project's path off s: it is known, and the rest
// needs the room.
func (m *Model) projectRel(s string) string {
	p := m.opt.Tree.Project
	if s == p {
		return "."
	}
	return strings.ReplaceAll(s, p+string(filepath.Separator), "")
}
