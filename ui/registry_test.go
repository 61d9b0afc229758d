package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/ui/uictx"
)

// pingPane is the least a pane is: one row, and p answered with a status
// line. It lives here, not under ui/panes/, because it is the test's.
type pingPane struct {
	kit.Table
	kit.Filter
	id   uictx.PaneID
	ping key.Binding
}

func newPing(id uictx.PaneID) uictx.Pane {
	return &pingPane{id: id, ping: key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "ping"))}
}

func (p *pingPane) Rebuild(c *uictx.Ctx) {
	p.Set([]string{"ping"}, func(int, bool) string { return "  the ping pane's row" })
}

func (p *pingPane) Update(c *uictx.Ctx, msg tea.KeyMsg) (tea.Msg, bool) {
	if key.Matches(msg, p.ping) && c.Shown == p.id {
		return uictx.Status("pong", false), true
	}
	return nil, false
}

func (p *pingPane) View(c *uictx.Ctx, h int) []string {
	return c.TableBox("Ping", "  ping", &p.Table, h, "no ping")
}

func (p *pingPane) Selected() uictx.Selection               { return uictx.Selection{} }
func (p *pingPane) SyncKeys(c *uictx.Ctx, set uictx.SetKey) {}

// A pane is its package and one line of the registry: registered, the
// ping pane is a tab with a number key, shows its row and answers its key.
// Not parallel: it changes the registry, which the parallel tests read
// only after it has put it back.
func TestOneRegistryLineAddsAPane(t *testing.T) {
	was := paneSpecs
	paneSpecs = append(paneSpecs[:len(paneSpecs):len(paneSpecs)], paneSpec{"Ping", "Ping", "", newPing})
	t.Cleanup(func() { paneSpecs = was })
	h := newHarness(t, newProject(t), 160, 30)
	if head, _, _ := strings.Cut(h.view(), "\n"); !strings.Contains(head, "8 Fleet  9 Ping") {
		t.Fatalf("no Ping tab after Fleet: %q", head)
	}
	h.press("9")
	if h.m.pane != 8 {
		t.Fatalf("9 shows pane %d, want the ping pane (8)", h.m.pane)
	}
	if v := h.view(); !strings.Contains(v, "the ping pane's row") {
		t.Fatalf("the ping pane's row is not shown:\n%s", v)
	}
	h.press("p")
	if h.m.status != "pong" {
		t.Fatalf("p in the ping pane: status %q, want pong", h.m.status)
	}
}
