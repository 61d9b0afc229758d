package claims

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMessageBounded: a note keeps its lines and tabs, loses every other
// control (escapes, bidi overrides, CR, C1, bytes that are not UTF-8) and
// is cut on a rune at MaxMailText; the other fields are clipped lines.
func TestMessageBounded(t *testing.T) {
	m := Message{ID: "id\x1b[2J" + strings.Repeat("x", 400), Kind: MailTell, By: "op\nx", Host: "h\u202e",
		Text: "one\r\n\ttwo\x1b]0;t\x07\u202e\x9b\xff" + strings.Repeat("é", MaxMailText)}.Bounded()
	if !strings.HasPrefix(m.Text, "one\n\ttwo]0;t") || len(m.Text) > MaxMailText || !utf8.ValidString(m.Text) || !strings.HasSuffix(m.Text, "é…") {
		t.Fatalf("text bounded as %q… (%d bytes)", m.Text[:20], len(m.Text))
	}
	if len(m.ID) > maxField || strings.ContainsAny(m.ID+m.By+m.Host, "\x1b\n\u202e") {
		t.Fatalf("fields bounded as %q %q %q", m.ID, m.By, m.Host)
	}
	if m.Problem() != "" {
		t.Fatalf("a bounded note has a problem: %s", m.Problem())
	}
}

func TestMessageProblem(t *testing.T) {
	ok := Message{ID: "1", Kind: MailTell, Text: "x", By: "op"}
	for _, c := range []struct {
		m    Message
		want string
	}{
		{ok, ""},
		{Message{ID: "1", Kind: MailInterrupt, By: "op"}, ""},
		{Message{ID: "1", Kind: MailAnswer, Ask: "a", Deny: true, By: "op"}, ""},
		{Message{Kind: MailTell, Text: "x", By: "op"}, "id"},
		{Message{ID: "1", Kind: MailTell, Text: "x"}, "sender"},
		{Message{ID: "1", Kind: MailTell, Text: "\n ", By: "op"}, "text"},
		{Message{ID: "1", Kind: MailAnswer, Option: "y", By: "op"}, "question"},
		{Message{ID: "1", Kind: MailAnswer, Ask: "a", By: "op"}, "option"},
		{Message{ID: "1", Kind: "shout\x1b", By: "op"}, "unknown kind"},
	} {
		if p := c.m.Problem(); (c.want == "") != (p == "") || !strings.Contains(p, c.want) || strings.Contains(p, "\x1b") {
			t.Errorf("%+v: %q, want %q", c.m, p, c.want)
		}
	}
	if _, err := CheckMail("h", "w", Message{Kind: MailTell}); !errors.Is(err, ErrBadMessage) || !strings.Contains(err.Error(), "w on h") {
		t.Errorf("CheckMail: %v", err)
	}
}

// TestAddMail: other runs' messages go, a repeat is no new message, the
// box holds MaxMail.
func TestAddMail(t *testing.T) {
	box := []Message{{ID: "old", Run: "r0", Kind: MailTell, Text: "x", By: "op"}}
	for i := range MaxMail {
		var added bool
		var err error
		box, added, err = AddMail(box, Message{ID: fmt.Sprint(i), Run: "r1", Kind: MailTell, Text: "x", By: "op"})
		if err != nil || !added {
			t.Fatalf("add %d: %v %v", i, added, err)
		}
	}
	if box[0].ID != "0" || len(box) != MaxMail {
		t.Fatalf("box %v", box)
	}
	if _, added, err := AddMail(box, Message{ID: "3", Run: "r1", Kind: MailTell, Text: "x", By: "op"}); added || err != nil {
		t.Fatalf("a repeat: %v %v", added, err)
	}
	if _, _, err := AddMail(box, Message{ID: "new", Run: "r1", Kind: MailTell, Text: "x", By: "op"}); !errors.Is(err, ErrMailFull) {
		t.Fatalf("a full box: %v", err)
	}
	if out, added, err := AddMail(box, Message{ID: "new", Run: "r2", Kind: MailTell, Text: "x", By: "op"}); !added || err != nil || len(out) != 1 {
		t.Fatalf("a new run's first message: %d %v %v", len(out), added, err)
	}
	if got, err := DecodeMail("x", EncodeMail(box)); err != nil || len(got) != MaxMail || len(MailFor(got, "")) != 0 {
		t.Fatalf("round trip: %d %v", len(got), err)
	}
	if !strings.Contains(string(EncodeMail([]Message{{Text: "<&>"}})), "<&>") {
		t.Fatal("stored with HTML escapes")
	}
}

// TestAskBounded: at most MaxAskOptions, each clipped; a question so long
// that the record would pass MaxRecord is stored shorter, so readers still
// read the worker.
func TestAskBounded(t *testing.T) {
	var opts []AskOption
	for i := range 50 {
		opts = append(opts, AskOption{ID: strings.Repeat("i", 1000), Label: fmt.Sprint(i, "\x1b[2J", strings.Repeat("<", 1000))})
	}
	rec := WorkerRecord{AgentID: "w", Host: "h", Run: "r", State: WorkerRunning, Note: strings.Repeat("\"", 1000), LastLine: strings.Repeat("\\", 1000),
		Asking: &AskRecord{ID: "a", Question: strings.Repeat("<\"", 5000), Options: opts}}
	b := rec.Bounded()
	if len(b.Asking.Options) != MaxAskOptions || len(b.Asking.Options[0].ID) > maxField || strings.Contains(b.Asking.Options[1].Label, "\x1b") ||
		len(b.Asking.Question) > maxQuestion {
		t.Fatalf("ask bounded as %d options, %d-byte question", len(b.Asking.Options), len(b.Asking.Question))
	}
	if rec.Asking.Question == b.Asking.Question {
		t.Fatal("Bounded changed its receiver's ask")
	}
	data := EncodeRecord(rec)
	got, err := DecodeRecord("x", data)
	if err != nil || got.Asking == nil || got.Asking.ID != "a" {
		t.Fatalf("a record with a huge question (%d bytes): %v", len(data), err)
	}
}
