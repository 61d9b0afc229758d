package model

import (
	"strings"
	"testing"
)

func FuzzParseHeader(f *testing.F) {
	f.Add(planText("- **Value:** high", "- **Priority:** P1", "- **Assignee:** alice — owns it", "- **Depends on:** a, `b.md`"))
	f.Add("## Depends on (detail)\n- `baz` — needs API\n* x\n### sub\n- y\n## Goal\n")
	f.Add("* **Value:** high\r\n**Priority:** P1\r\n- **Value**: low\r\n")
	f.Fuzz(func(t *testing.T, text string) {
		h := ParseHeader(text)
		if h.Priority != "P1" && h.Priority != "P2" && h.Priority != "P3" {
			t.Errorf("priority %q", h.Priority)
		}
		if h.Value != "high" && h.Value != "medium" && h.Value != "low" {
			t.Errorf("value %q", h.Value)
		}
		// \r\n, a lone \r and \n each end a line.
		lines := strings.Count(strings.ReplaceAll(text, "\r\n", "\n"), "\n") +
			strings.Count(strings.ReplaceAll(text, "\r\n", "\n"), "\r") + 1
		for _, w := range h.Warnings {
			if w.Line < 1 || w.Line > lines {
				t.Errorf("warning on line %d of %d: %+v", w.Line, lines, w)
			}
			if w.Message == "" {
				t.Errorf("empty warning message on line %d", w.Line)
			}
		}
		for _, d := range h.DependsOn {
			if d == "" || strings.TrimSpace(d) != d {
				t.Errorf("dependency %q is empty or untrimmed", d)
			}
		}
		for _, p := range h.Preferred {
			if p == "" || strings.ToLower(p) != p {
				t.Errorf("preferred token %q is empty or not lower case", p)
			}
		}
		if h.Assignee == "" && h.AssigneeRaw == "" && !h.AgentAssignable {
			t.Errorf("absent Assignee is not agent-assignable")
		}
		if strings.ContainsAny(h.Title, "\r\n") {
			t.Errorf("title %q spans lines", h.Title)
		}
	})
}
