package claims

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCheckMail: a message Send refuses is one line naming the worker,
// wrapping ErrBadMessage; one it takes comes back bounded.
func TestCheckMail(t *testing.T) {
	for _, m := range []Message{{Kind: MailTell, Text: "x"}, {ID: "1", Kind: "shout\x1b[2J"}, {ID: "1", Kind: MailTell, Text: " \n"},
		{ID: "1", Kind: MailAnswer, Option: "y"}} {
		_, err := CheckMail("h", "w", m)
		if !errors.Is(err, ErrBadMessage) || !strings.Contains(err.Error(), "w on h") || strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Errorf("CheckMail(%+v) = %v", m, err)
		}
	}
	m, err := CheckMail("h", "w", Message{ID: "1", Kind: MailTell, Text: "a\x1b[2J\r\n\tb" + strings.Repeat("é", MaxMailText), By: "op\nx"})
	if err != nil || !strings.HasPrefix(m.Text, "a[2J\n\tb") || len(m.Text) > MaxMailText || !utf8.ValidString(m.Text) || strings.Contains(m.By, "\n") {
		t.Fatalf("CheckMail bounded a note as %q… (%d bytes), by %q: %v", m.Text[:10], len(m.Text), m.By, err)
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
