package termtext

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestLineDropsControlCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"plain title":               "plain title",
		"evil\x1b]0;pwned\x07title": "evil?]0;pwned?title",
		"tab\there\nnew":            "tab here new",
		"c1\u009bcsi":               "c1?csi",
		"raw\x9b31mc1":              "raw?31mc1",
		"bad\xff\xfeutf8":           "bad?utf8",
		"del\x7f":                   "del?",
		"ünïcödé ✓":                 "ünïcödé ✓",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Block("a\n\tb\x1b[2J"); got != "a\n\tb?[2J" {
		t.Errorf("Block kept a control character: %q", got)
	}
}

// Bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and friends)
// reorder the rest of a line on a terminal that does bidi, so a plan title
// could make what follows read differently.
func TestLineDropsBidiControls(t *testing.T) {
	for _, r := range []rune{0x202a, 0x202b, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x200e, 0x200f} {
		s := Line("abc" + string(r) + "def")
		if strings.ContainsRune(s, r) {
			t.Errorf("Line kept U+%04X", r)
		}
	}
}

func TestJSONEscapesWhatATerminalWouldObey(t *testing.T) {
	in := map[string]string{"title": "c1\u009b31m del\x7f bidi\u202egnp ✓ \x1b[2J"}
	doc, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := JSON(doc)
	if i := strings.IndexFunc(string(out), func(r rune) bool { return r >= 0x7f && control(r) }); i >= 0 {
		t.Fatalf("raw control left at %d: %q", i, out)
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("escaped JSON does not decode: %v: %s", err, out)
	}
	if back["title"] != in["title"] {
		t.Errorf("decoded %q, want %q", back["title"], in["title"])
	}
	if plain := []byte(`{"a":"ünïcödé"}`); string(JSON(plain)) != string(plain) {
		t.Errorf("plain text changed: %s", JSON(plain))
	}
}
