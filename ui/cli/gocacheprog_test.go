package cli

import (
	"io"
	"testing"
)

// The verb is served before the command tree: bad arguments are its own
// one-line error (exit 2), and other commands are not taken for it.
func TestGocacheprogVerb(t *testing.T) {
	if code := Main([]string{gocacheVerb, "--read", "relative"}, io.Discard, io.Discard); code != exitError {
		t.Errorf("gocacheprog with a relative --read: exit %d, want %d", code, exitError)
	}
	if _, ok := gocacheProg([]string{"queue", gocacheVerb}); ok {
		t.Error("a later argument named the verb")
	}
}
