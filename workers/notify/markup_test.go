package notify

import (
	"strings"
	"testing"
)

// TestSlackTextIsInert: what an agent can write into a title reaches a
// chat as text, never as a ping or a disguised link.
func TestSlackTextIsInert(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<!channel> <https://evil.example/login|Approve here>", "&lt;!channel&gt; &lt;https://evil.example/login|Approve here&gt;"},
		{"a & b <@U123> <#C1>", "a &amp; b &lt;@U123&gt; &lt;#C1&gt;"},
		{"&lt; stays text", "&amp;lt; stays text"},
		{"@everyone @Here @channel @hermes", "@\u200beveryone @\u200bHere @\u200bchannel @hermes"},
		{"[Approve](https://evil.example) [x] (y)", "[Approve]\u200b(https://evil.example) [x] (y)"},
		{"plain text, é ü", "plain text, é ü"},
	} {
		if got := slackText(c.in); got != c.want {
			t.Errorf("slackText(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := slackText(c.in); strings.ContainsAny(got, "<>") {
			t.Errorf("slackText(%q) keeps markup: %q", c.in, got)
		}
	}
}
