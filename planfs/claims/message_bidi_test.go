package claims

import "testing"

func TestMessageTextLosesBidiMarks(t *testing.T) {
	m := Message{ID: "a", Kind: MailTell, Text: "fix \u202eevil\u202c now\n\tok", By: "ann"}.Bounded()
	if m.Text != "fix evil now\n\tok" {
		t.Fatalf("Bounded kept %q", m.Text)
	}
}
