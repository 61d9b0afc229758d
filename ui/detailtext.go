package ui

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// detailText gathers a detail's lines: headings, label and value pairs,
// and blocks of text (raw JSON, git's output) shown line by line.
type detailText struct {
	c     *common
	lines []string
}

func (d *detailText) heading(s string) {
	if len(d.lines) > 0 {
		d.lines = append(d.lines, "")
	}
	d.lines = append(d.lines, d.c.st.Title.Render(s))
}

// field is one label and its value; the value is made safe here.
func (d *detailText) field(label, value string) {
	d.lines = append(d.lines, "  "+d.c.st.Dim.Render(kit.Fit(label, 15))+" "+termtext.Line(value))
}

// block is text of many lines, each made safe.
func (d *detailText) block(text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		d.lines = append(d.lines, "  "+d.c.st.Dim.Render("(empty)"))
		return
	}
	for _, l := range strings.Split(text, "\n") {
		d.lines = append(d.lines, "  "+termtext.Line(strings.TrimSuffix(l, "\r")))
	}
}

func (d *detailText) note(s string) {
	d.lines = append(d.lines, "  "+d.c.st.Dim.Render(termtext.Line(s)))
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
		return s + " · in " + kit.Span(sec-now)
	}
	return s + " · " + kit.Span(now-sec) + " ago"
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

// projectRel takes the project's path off s: it is known, and the rest
// needs the room.
func (c *common) projectRel(s string) string {
	p := c.opt.Tree.Project
	if s == p {
		return "."
	}
	return strings.ReplaceAll(s, p+string(filepath.Separator), "")
}
