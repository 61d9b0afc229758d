package firsthourtest

import (
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/docs"
	"github.com/fleetwatch/fleetwatch/internal/testkit/fwtest"
)

// `help TOPIC` prints the manual's page for every topic; a topic that is
// also a command (work-once, watch, serve, notify) gets the command's usage first.
func TestHelpTopics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	commands := map[string]bool{"work-once": true, "watch": true, "serve": true, "notify": true}
	for _, topic := range docs.Topics {
		page, _ := docs.Page(topic)
		r := fwtest.Run(t, dir, "help", topic)
		if r.Code != fwtest.ExitOK || !strings.HasSuffix(r.Stdout, page) || r.Stderr != "" {
			t.Errorf("help %s: not its page: %.300s", topic, r)
			continue
		}
		if usage := strings.HasPrefix(r.Stdout, "usage: fleetwatch "+topic); usage != commands[topic] {
			t.Errorf("help %s: starts with the command's usage: %v, want %v", topic, usage, commands[topic])
		}
	}
	r := fwtest.Run(t, dir, "-h")
	if !strings.Contains(r.Stdout, "fleetwatch help TOPIC': plans, work-once, workers") {
		t.Errorf("-h does not name the manual's topics:\n%s", r.Stdout)
	}
}

// A mistyped command, subcommand, flag or help topic is one line naming the
// nearest; the words of other tools point at fleetwatch's own.
func TestSuggestions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"wrok-once"}, `unknown command "wrok-once": did you mean work-once?`},
		{[]string{"scafold"}, "did you mean scaffold?"},
		{[]string{"doctr"}, "did you mean doctor?"},
		{[]string{"init"}, "'fleetwatch scaffold' starts a project"},
		{[]string{"status"}, "'fleetwatch watch status' shows the workers"},
		{[]string{"work-once", "--lst"}, "flag provided but not defined: -lst; did you mean --list? (run 'fleetwatch work-once -h')"},
		{[]string{"work-once", "--ensure-worktre"}, "did you mean --ensure-worktree?"},
		{[]string{"watch", "stauts"}, `unknown subcommand "stauts": did you mean status?`},
		{[]string{"queue", "lnd"}, "did you mean land?"},
		{[]string{"help", "landng"}, `no command or topic "landng": did you mean landing?`},
		{[]string{"help", "wrok-once"}, "did you mean work-once?"},
		{[]string{"agents", "cluade"}, `no preset "cluade": did you mean claude?`},
		{[]string{"--rot", "x"}, "flag provided but not defined: -rot; did you mean --root?"},
	} {
		r := fwtest.Run(t, dir, c.args...)
		fwtest.OneLineError(t, r, c.want)
	}
	// Nothing near: no guess.
	for _, args := range [][]string{{"frobnicate"}, {"work-once", "--zzz"}, {"help", "frobnicate"}} {
		if r := fwtest.Run(t, dir, args...); strings.Contains(r.Stderr, "did you mean") {
			t.Errorf("%v: a guess for a word near nothing: %s", args, r.Stderr)
		}
	}
}
