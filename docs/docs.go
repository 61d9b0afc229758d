// Package docs is fleetwatch's manual: one markdown page per topic, read as
// it is in a browser of the repository and embedded in the binary, where
// `fleetwatch help TOPIC` prints it.
package docs

import (
	"embed"
	"strings"
)

//go:embed *.md
var pages embed.FS

// Topics are the pages in the order `fleetwatch help` lists them: the
// order a new operator meets them.
var Topics = []string{"plans", "work-once", "workers", "sandbox", "watch", "ui", "landing", "coordinator", "serve", "claims", "anchor", "speed"}

// Page is the markdown of topic, and whether there is such a page.
func Page(topic string) (string, bool) {
	data, err := pages.ReadFile(topic + ".md")
	if err != nil {
		return "", false
	}
	return string(data), true
}

// Title is a page's first heading without its marks: the line `fleetwatch
// help` shows beside the topic.
func Title(topic string) string {
	text, _ := Page(topic)
	for _, line := range strings.Split(text, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			return strings.ReplaceAll(t, "`", "")
		}
	}
	return ""
}
