package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/fleetwatch/fleetwatch/internal/config"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
)

// message is what one send carries: one notice, or a summary of several
// that waited over the rate.
type message struct {
	IDs     []string
	Kind    string
	Text    string // raw: each target makes it safe for where it goes
	Subject string
	At      time.Time
}

// target is one place messages go.
type target struct {
	name      string
	kinds     map[model.NoticeKind]bool // nil: every kind
	perMinute int
	// absent says why it cannot deliver from this process ("" when it
	// can): such a target claims nothing, so a process that can sends.
	absent func() string
	// send tries once; retry says a later try may work (a network error,
	// a 5xx, a 429), not a refusal (another 4xx).
	send func(ctx context.Context, m message) (retry bool, err error)
	// shared names the target as every machine does (a webhook's URL),
	// for the ledger; "" for a target that is this machine's alone (the
	// terminal, the desktop).
	shared string
}

func (t *target) takes(k model.NoticeKind) bool { return t.kinds == nil || t.kinds[k] }

func kindSet(kinds []string) map[model.NoticeKind]bool {
	if len(kinds) == 0 {
		return nil
	}
	out := map[model.NoticeKind]bool{}
	for _, k := range kinds {
		out[model.NoticeKind(k)] = true
	}
	return out
}

func perMinute(n int) int {
	if n == 0 {
		return config.DefaultPerMinute
	}
	return n
}

// webhookTimeout bounds one request, answer included; webhookBody bounds
// how much of an answer is read.
const (
	webhookTimeout = 10 * time.Second
	webhookBody    = 64 << 10
)

// webhookClient follows no redirect: a POST turned into a GET elsewhere
// is not a delivery.
var webhookClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// jsonBody is format: json's body.
type jsonBody struct {
	ID      string   `json:"id"`
	IDs     []string `json:"ids,omitempty"` // a summary's notices
	Kind    string   `json:"kind"`
	Text    string   `json:"text"`
	Project string   `json:"project"`
	Host    string   `json:"host"`
	At      string   `json:"at"`
	Subject string   `json:"subject,omitempty"`
}

func (n *Notifier) webhook(w config.Webhook) *target {
	t := &target{name: w.Name, kinds: kindSet(w.Kinds), perMinute: perMinute(w.PerMinute), absent: func() string { return "" }, shared: w.URL}
	t.send = func(ctx context.Context, m message) (bool, error) {
		var body any = jsonBody{ID: m.IDs[0], Kind: m.Kind, Text: m.Text, Project: n.opt.Project, Host: n.opt.Host,
			At: m.At.UTC().Format(time.RFC3339), Subject: m.Subject}
		if len(m.IDs) > 1 {
			b := body.(jsonBody)
			b.ID, b.IDs = "summary:"+m.IDs[0], m.IDs
			body = b
		}
		if w.Format == "slack" {
			body = struct {
				Text string `json:"text"`
			}{slackText(n.headline() + m.Text)}
		}
		data, err := json.Marshal(body)
		if err != nil {
			return false, err
		}
		return post(ctx, w, data)
	}
	return t
}

// post sends one request; a network error, a 5xx or a 429 (the hook's
// own rate: Slack's answer to a burst) may be retried.
func post(ctx context.Context, w config.Webhook, data []byte) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(data))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "fleetwatch-notify")
	for k, v := range w.Headers {
		req.Header.Set(k, v)
	}
	resp, err := webhookClient.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap() // not the URL again, which may hold a secret
		}
		return ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded), err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, webhookBody))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, nil
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(answer)), "\n")
	if len(first) > 200 {
		first = first[:200]
	}
	err = fmt.Errorf("HTTP %d%s", resp.StatusCode, orEmpty(": ", termtext.Line(first)))
	return resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests, err
}

func orEmpty(sep, s string) string {
	if s == "" {
		return ""
	}
	return sep + s
}

// headline starts a message for people: "fleetwatch · project: ".
func (n *Notifier) headline() string { return "fleetwatch · " + n.opt.Project + ": " }

// terminal writes the terminal's own notification to opt.Term: OSC 777
// (notify; title; body) and/or OSC 9 (body), each ended by BEL, wrapped
// for tmux's passthrough inside tmux.
func (n *Notifier) terminal(c *config.TerminalTarget) *target {
	t := &target{name: "terminal", kinds: kindSet(c.Kinds), perMinute: perMinute(c.PerMinute)}
	t.absent = func() string {
		if n.opt.Term == nil {
			return "no terminal here"
		}
		if a, ok := n.opt.Term.(Absentee); ok {
			return a.Absent()
		}
		return ""
	}
	t.send = func(ctx context.Context, m message) (bool, error) {
		title := strings.ReplaceAll(termtext.Line("fleetwatch · "+n.opt.Project), ";", ",")
		body := termtext.Line(m.Text)
		// Terminals show a line or two of it; some drop a longer sequence.
		if r := []rune(body); len(r) > oscBody {
			body = string(r[:oscBody-1]) + "…"
		}
		var seqs []string
		if c.OSC777 {
			seqs = append(seqs, "\x1b]777;notify;"+title+";"+body+"\a")
		}
		if c.OSC9 {
			seqs = append(seqs, "\x1b]9;"+title+": "+body+"\a")
		}
		var out strings.Builder
		for _, s := range seqs {
			out.WriteString(wrapTmux(s, n.opt.Tmux))
		}
		// One write, as the cockpit writes each frame: the two never
		// interleave inside an escape sequence.
		_, err := io.WriteString(n.opt.Term, out.String())
		return false, err
	}
	return t
}

// oscBody bounds a terminal notification's text, in characters.
const oscBody = 300

// Absentee is a Term that is sometimes not there (the terminals of
// fleetwatch serve's sessions, when none is open): Absent says why, ""
// while it is. What waits for it is offered again at the next look.
type Absentee interface {
	Absent() string
}

// WrapTmux is seq wrapped for tmux's passthrough, for a writer that knows
// its terminal runs tmux where the notifier does not (Options.Tmux).
func WrapTmux(seq string) string { return wrapTmux(seq, true) }

// wrapTmux wraps seq for tmux's passthrough (DCS tmux; …, each ESC
// doubled, ended by ST) when inside tmux; as is otherwise.
func wrapTmux(seq string, inTmux bool) string {
	if !inTmux {
		return seq
	}
	return "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
}

// desktopTimeout bounds one notify-send.
const desktopTimeout = 10 * time.Second

// desktop runs notify-send, where it is installed (looked up on each
// send's first try, so installing it needs no restart).
func (n *Notifier) desktop(c *config.Target) *target {
	t := &target{name: "desktop", kinds: kindSet(c.Kinds), perMinute: perMinute(c.PerMinute)}
	t.absent = func() string {
		if _, err := exec.LookPath("notify-send"); err != nil {
			return "notify-send is not installed"
		}
		return ""
	}
	t.send = func(ctx context.Context, m message) (bool, error) {
		path, err := exec.LookPath("notify-send")
		if err != nil {
			return false, err
		}
		ctx, cancel := context.WithTimeout(ctx, desktopTimeout)
		defer cancel()
		title := termtext.Line("fleetwatch · " + n.opt.Project)
		// "--" ends the options: a text starting with "-" is not one.
		cmd := exec.CommandContext(ctx, path, "--app-name=fleetwatch", "--", title, termtext.Line(m.Text))
		// A child left holding its output (a wrapper that backgrounds its
		// work) would hold this send, and Close, as long as it lives; it
		// exited well, which is what counts.
		cmd.WaitDelay = time.Second
		if out, err := cmd.CombinedOutput(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
			return false, fmt.Errorf("notify-send: %v%s", err, orEmpty(": ", termtext.Line(first)))
		}
		return false, nil
	}
	return t
}
