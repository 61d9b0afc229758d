package notify

import "strings"

// slackText is text as Slack shows it literally. Slack reads three
// characters as markup (&, < and >: its escaping rules), so with them
// escaped a title's <!channel>, <@U…> or <https://…|label> is shown, not
// acted on: no ping, no link dressed as something else. format: slack
// also reaches chat bridges with markup of their own (Discord's /slack
// endpoint): @everyone, @here and @channel get a zero-width space after
// the @, and a masked link [label](url) one between ] and (. fleetwatch
// builds no link of its own into a message, so none is left live; a bare
// URL in the text is shown as itself (a chat may still make it clickable).
func slackText(s string) string {
	s = slackEscaper.Replace(s)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		switch {
		case s[i] == '@' && massMention(s[i+1:]):
			b.WriteString(zeroWidth)
		case s[i] == ']' && i+1 < len(s) && s[i+1] == '(':
			b.WriteString(zeroWidth)
		}
	}
	return b.String()
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

const zeroWidth = "\u200b"

// massMention is rest (what follows an @) starting with a word that pings
// everyone in a channel.
func massMention(rest string) bool {
	for _, w := range []string{"everyone", "here", "channel"} {
		if len(rest) >= len(w) && strings.EqualFold(rest[:len(w)], w) {
			return true
		}
	}
	return false
}
