package kit

import (
	"cmp"
	"fmt"
	"math"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// Fit pads or cuts s to exactly w cells, marking a cut with `…`.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(s)
	if n > w {
		cut := ansi.Truncate(s, w, "…")
		if strings.Contains(s, "\x1b[") {
			// The cut may drop the closing reset; a style must not run on.
			cut += "\x1b[0m"
		}
		// A cut inside a wide character leaves a cell over.
		return cut + strings.Repeat(" ", max(0, w-ansi.StringWidth(cut)))
	}
	return s + strings.Repeat(" ", w-n)
}

// FitRight right-aligns s in w cells.
func FitRight(s string, w int) string {
	n := ansi.StringWidth(s)
	if n >= w {
		return Fit(s, w)
	}
	return strings.Repeat(" ", w-n) + s
}

// Span renders a duration in seconds the way an operator reads it at a
// glance: 42s, 12m, 3h05m, 2d4h.
func Span(sec float64) string {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return "?"
	}
	s := int64(math.Abs(sec))
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
}

// Coarse is span without the smaller unit below an hour: 42s, 11m, 2h05m.
func Coarse(sec float64) string {
	if sec >= 60 && sec < 3600 {
		return fmt.Sprintf("%dm", int64(sec)/60)
	}
	return Span(sec)
}

// Plural is "1 lease" or "2 leases".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func Itoa(n int) string { return fmt.Sprint(n) }

// NatCompare orders agent ids as people count them: ui-mid-2 before
// ui-mid-10. Runs of digits compare by value, the rest byte by byte.
func NatCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			x, y := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(x), len(y)); c != 0 {
				return c
			}
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun is the length of the ASCII digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Beside joins two blocks of lines side by side; both must have the same height.
func Beside(left, right []string) []string {
	out := make([]string, max(len(left), len(right)))
	for i := range out {
		var l, r string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			r = right[i]
		}
		out[i] = l + r
	}
	return out
}
