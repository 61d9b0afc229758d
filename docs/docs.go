// Package docs is fleetwatch's manual: one markdown page per topic, read as
// it is in a browser of the repository and embedded in the binary, where
// `fleetwatch help TOPIC` prints it.
package docs

import "embed"

//go:embed *.md
var pages embed.FS

// Topics are the pages in the order `fleetwatch help` lists them: the
// order a new operator meets them.
var Topics = []string{"plans", "work-once", "workers", "sandbox", "watch", "ui", "landing", "spend", "notify", "coordinator", "serve", "claims", "anchor", "speed", "panes", "structure"}

// Page is the markdown of topic, and whether there is such a page.
func Page(topic string) (string, bool) {
	data, err := pages.ReadFile(topic + ".md")
	if err != nil {
		return "", false
	}
	return string(data), true
}
