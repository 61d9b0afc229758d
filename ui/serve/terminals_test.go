package serve

import (
	"bytes"
	"strings"
	"testing"
)

// A project's notification reaches the sessions showing it (wrapped for
// tmux where the session is in tmux), none other, and none closed; with
// no session showing it the target is absent.
func TestTerminalsReachTheSessionsShowingTheProject(t *testing.T) {
	ts := NewTerminals()
	api, web := ts.For("/srv/api"), ts.For("/srv/web")
	if api.Absent() == "" {
		t.Fatal("no session open, yet the terminal is not absent")
	}
	var both, onlyWeb, gone bytes.Buffer
	sBoth, sWeb, sGone := newScreen(&both, frameRate), newScreen(&onlyWeb, frameRate), newScreen(&gone, frameRate)
	ts.add(sBoth, []string{"/srv/api", "/srv/web"}, inTmux(nil, "tmux-256color"))
	ts.add(sWeb, []string{"/srv/web"}, inTmux([]string{"TMUX="}, "xterm"))
	ts.add(sGone, []string{"/srv/api"}, false)
	sGone.close()
	gone.Reset()
	if why := api.Absent(); why != "" {
		t.Fatalf("api is shown, yet absent: %s", why)
	}
	api.Write([]byte("\x1b]9;api\a"))
	web.Write([]byte("\x1b]9;web\a"))
	if got, want := both.String(), "\x1bPtmux;\x1b\x1b]9;api\a\x1b\\\x1bPtmux;\x1b\x1b]9;web\a\x1b\\"; got != want {
		t.Errorf("the tmux session got %q, want %q", got, want)
	}
	if got := onlyWeb.String(); got != "\x1b]9;web\a" {
		t.Errorf("the web session got %q", got)
	}
	if gone.Len() != 0 {
		t.Errorf("a closed screen was written to: %q", gone.String())
	}
	ts.remove(sBoth)
	ts.remove(sGone)
	if why := api.Absent(); !strings.Contains(why, "no session") {
		t.Errorf("api with no session showing it: absent %q", why)
	}
}
