package kit

import (
	"crypto/sha256"
	"strings"
	"sync"

	"github.com/fleetwatch/fleetwatch/internal/mdterm"
	"github.com/fleetwatch/fleetwatch/internal/termtext"
)

// RenderMarkdown renders text (made safe for the terminal first) in the
// markdown style settled before the program started (mdterm's dark, light
// or notty), wrapped at width.
func RenderMarkdown(text, style string, width int) string {
	key := markdownKey{sha256.Sum256([]byte(text)), style, max(20, width)}
	if out, ok := rendered.get(key); ok {
		return out
	}
	out := strings.Trim(mdterm.Render(termtext.Block(text), style, key.width), "\n")
	rendered.put(key, out)
	return out
}

// rendered keeps the latest renders for every model of the process: the
// sessions of a server mostly render the same plan or proposal at the same
// width, and rendering is the costliest thing they would each do.
var rendered = markdownCache{m: map[markdownKey]string{}}

type markdownKey struct {
	sum   [sha256.Size]byte
	style string
	width int
}

// markdownCache is a small map, emptied when full: the renders in use
// come back at once.
type markdownCache struct {
	mu sync.Mutex
	m  map[markdownKey]string
}

const markdownCacheSize = 64

func (c *markdownCache) get(k markdownKey) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out, ok := c.m[k]
	return out, ok
}

func (c *markdownCache) put(k markdownKey, out string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= markdownCacheSize {
		clear(c.m)
	}
	c.m[k] = out
}
