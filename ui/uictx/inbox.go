package uictx

import (
	"github.com/fleetwatch/fleetwatch/ui/kit"
	"github.com/fleetwatch/fleetwatch/workers/coord"
)

// Inbox is the inbox as last read well, each proposal rendered at Width;
// Err is why the last reading failed (the entries stay).
type Inbox struct {
	Entries []coord.Entry
	Texts   []string
	Width   int
	Err     error
	// Threads are people's comments on the forge's PRs (ReadThreads).
	Threads []Thread
}

// InboxMsg is one reading of the inbox, each proposal rendered at width.
type InboxMsg struct {
	Data  InboxData
	Texts []string
	Width int
}

// InboxData is one reading of the inbox and each entry's proposal, not
// yet rendered: a hub reads it once, each session renders it at its width.
type InboxData struct {
	Entries []coord.Entry
	Props   []Proposal
	Err     error
	Threads []Thread
}

// Proposal is an entry's Proposal as read: its text, whether only its head
// was read, or why it could not be.
type Proposal struct {
	Text string
	Cut  bool
	Err  error
}

func ReadProposal(e coord.Entry) Proposal {
	text, cut, err := coord.ReadProposal(e)
	return Proposal{Text: text, Cut: cut, Err: err}
}

// Render is the proposal rendered, or why it cannot be read.
func (p Proposal) Render(style string, width int) string {
	if p.Err != nil {
		return "cannot read the proposal: " + p.Err.Error()
	}
	out := kit.RenderMarkdown(p.Text, style, width)
	if p.Cut {
		out += "\n\n(only the head of the proposal is shown; the file is longer)"
	}
	return out
}
