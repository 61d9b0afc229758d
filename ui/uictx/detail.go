package uictx

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// DetailText gathers a detail's lines: headings, label and value pairs,
// and blocks of text (raw JSON, git's output) shown line by line.
type DetailText struct {
	C     *Common
	Lines []string
}

func (d *DetailText) Heading(s string) {
	if len(d.Lines) > 0 {
		d.Lines = append(d.Lines, "")
	}
	d.Lines = append(d.Lines, d.C.St.Title.Render(s))
}

// Field is one label and its value; the value is made safe here.
func (d *DetailText) Field(label, value string) {
	d.Lines = append(d.Lines, "  "+d.C.St.Dim.Render(kit.Fit(label, 15))+" "+termtext.Line(value))
}

// Block is text of many lines, each made safe.
func (d *DetailText) Block(text string) {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		d.Lines = append(d.Lines, "  "+d.C.St.Dim.Render("(empty)"))
		return
	}
	for _, l := range strings.Split(text, "\n") {
		d.Lines = append(d.Lines, "  "+termtext.Line(strings.TrimSuffix(l, "\r")))
	}
}

func (d *DetailText) Note(s string) {
	d.Lines = append(d.Lines, "  "+d.C.St.Dim.Render(termtext.Line(s)))
}

// Stamp shows a Unix time as its number, the local time, and how far from
// now it is.
func Stamp(sec, now float64) string {
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

// RawJSON shows a file's bytes: indented when they parse, as they are
// (made safe) when not.
func (d *DetailText) RawJSON(raw []byte) {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") == nil {
		d.Block(buf.String())
		return
	}
	d.Note("not valid JSON; the bytes as they are:")
	d.Block(termtext.Block(strings.ToValidUTF8(string(raw), "?")))
}

// ExtraFields lists the top-level keys of raw that known does not name.
func (d *DetailText) ExtraFields(raw []byte, known ...string) {
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
	d.Heading("Other fields")
	for _, k := range extra {
		d.Field(k, string(fields[k]))
	}
}
