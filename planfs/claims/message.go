package claims

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Message is a person's message to a running worker's run.
type Message struct {
	ID     string `json:"id"`
	Run    string `json:"run"`
	Kind   string `json:"kind"`
	Text   string `json:"text,omitempty"`
	Ask    string `json:"ask,omitempty"`
	Option string `json:"option,omitempty"`
	Deny   bool   `json:"deny,omitempty"`
	// Plan is the plan the sender saw the run work on: a message that
	// reaches a later run of the same worker is refused, not acted on.
	Plan string  `json:"plan,omitempty"`
	By   string  `json:"by"`
	Host string  `json:"host,omitempty"`
	At   float64 `json:"at,omitempty"`
}

// The kinds of Message.
const (
	MailTell      = "tell"
	MailInterrupt = "interrupt"
	MailAnswer    = "answer"
)

// MaxMailText bounds a message's text.
const MaxMailText = 4 << 10

// Bounded is m with its text valid UTF-8 within MaxMailText, no control
// characters but newlines and tabs, no bidirectional marks (a note is
// shown in faces and logs), and every other field one clipped line.
func (m Message) Bounded() Message {
	text := strings.Map(func(r rune) rune {
		if (unicode.IsControl(r) && r != '\n' && r != '\t') || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(m.Text, "?"))
	if len(text) > MaxMailText {
		cut := MaxMailText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	m.Text = text
	for _, f := range []*string{&m.ID, &m.Run, &m.Kind, &m.Ask, &m.Option, &m.Plan, &m.By, &m.Host} {
		*f = Clip(*f, maxField)
	}
	return m
}

// Problem says why m is not a message, "" when it is.
func (m Message) Problem() string {
	switch {
	case m.ID == "":
		return "a message without an id"
	case m.Kind != MailTell && m.Kind != MailInterrupt && m.Kind != MailAnswer:
		return "a message of unknown kind " + Clip(m.Kind, 32)
	case m.Kind == MailTell && strings.TrimSpace(m.Text) == "":
		return "an empty note"
	case m.Kind == MailAnswer && m.Ask == "":
		return "an answer to no question"
	}
	return ""
}

// AskRecord is a question or permission request a run waits on.
type AskRecord struct {
	ID       string      `json:"id"`
	Question string      `json:"question"`
	Options  []AskOption `json:"options,omitempty"`
	Since    float64     `json:"since"`
}

// AskOption is one answer a permission request takes.
type AskOption struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Allow bool   `json:"allow,omitempty"`
}

// FirstAllowing is the id of a's first option that lets the agent go
// ahead, "" when none does (or a is nil): what "allow" answers.
func (a *AskRecord) FirstAllowing() string {
	if a == nil {
		return ""
	}
	for _, o := range a.Options {
		if o.Allow {
			return o.ID
		}
	}
	return ""
}
