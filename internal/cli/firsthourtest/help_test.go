package firsthourtest

import (
	"strings"
	"testing"

	"fleetwatch/docs"
	"fleetwatch/internal/testkit/fwtest"
)

// `help TOPIC` prints the manual's page for every topic; a topic that is
// also a command (work-once, watch, serve) gets the command's usage first.
func TestHelpTopics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	commands := map[string]bool{"work-once": true, "watch": true, "serve": true}
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

// Every command's help has a description and an example, and each example
// is a command line fleetwatch takes: its command exists and so does every
// flag it names.
func TestEveryCommandDescribedWithAWorkingExample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	top := fwtest.Run(t, dir, "-h").Stdout
	for _, line := range strings.Split(top[strings.Index(top, "\nExamples:\n")+11:], "\n") {
		if line == "" {
			break
		}
		checkExample(t, dir, "fleetwatch", line)
	}
	var paths [][]string
	_, list, _ := strings.Cut(top, "\nLook:\n")
	list, _, _ = strings.Cut(list, "\nFlags:\n")
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(line, "  ") && f[0] != "help" && f[0] != "completion" {
			paths = append(paths, []string{f[0]})
		}
	}
	for i := 0; i < len(paths); i++ {
		r := fwtest.Run(t, dir, append(paths[i], "-h")...)
		name := strings.Join(paths[i], " ")
		usage, rest, _ := strings.Cut(r.Stdout, "\n\n")
		desc, _, _ := strings.Cut(rest, "\n\n")
		if r.Code != 0 || !strings.HasPrefix(usage, "usage: fleetwatch "+name) || desc == "" || strings.HasPrefix(desc, "Flags:") || strings.HasPrefix(desc, "Examples:") {
			t.Errorf("%s -h: no description after the usage line:\n%s", name, r.Stdout)
		}
		_, ex, ok := strings.Cut(r.Stdout, "\nExamples:\n")
		if !ok {
			t.Errorf("%s -h: no examples:\n%s", name, r.Stdout)
			continue
		}
		ex, _, _ = strings.Cut(ex, "\n\n")
		for _, line := range strings.Split(ex, "\n") {
			checkExample(t, dir, name, line)
		}
		// The subcommands of a group are listed under Commands:.
		if _, cmds, ok := strings.Cut(r.Stdout, "\nCommands:\n"); ok {
			cmds, _, _ = strings.Cut(cmds, "\n\n")
			for _, l := range strings.Split(cmds, "\n") {
				if f := strings.Fields(l); len(f) > 0 {
					paths = append(paths, append(append([]string{}, paths[i]...), f[0]))
				}
			}
		}
	}
	if len(paths) < 40 {
		t.Errorf("only %d commands walked", len(paths))
	}
}

// checkExample runs an example's command with -h after its command words
// and checks every --flag it names is in that help.
func checkExample(t *testing.T, dir, name, line string) {
	t.Helper()
	line, _, _ = strings.Cut(line, "  #")
	at := strings.Index(line, "fleetwatch ")
	if at < 0 {
		if strings.TrimSpace(line) != "fleetwatch" {
			t.Errorf("%s: example %q does not run fleetwatch", name, line)
		}
		return
	}
	words := strings.Fields(strings.TrimRight(line[at+len("fleetwatch "):], ")\""))
	if len(words) == 0 {
		return
	}
	var path []string
	for _, w := range words {
		if strings.HasPrefix(w, "-") || strings.ContainsAny(w, "&|") {
			break
		}
		path = append(path, w)
	}
	r := fwtest.Run(t, dir, append(path, "-h")...)
	for len(path) > 0 && (r.Code != 0 || !strings.HasPrefix(r.Stdout, "usage: fleetwatch "+strings.Join(path, " "))) {
		path = path[:len(path)-1] // the rest were arguments
		r = fwtest.Run(t, dir, append(path, "-h")...)
	}
	if len(path) == 0 && !strings.HasPrefix(words[0], "-") {
		t.Errorf("%s: example %q names no command", name, line)
		return
	}
	_, flags, _ := strings.Cut(r.Stdout, "\nFlags:\n")
	for _, w := range words {
		if strings.Contains(w, "&&") || w == "|" {
			break
		}
		if flag, _, _ := strings.Cut(w, "="); strings.HasPrefix(flag, "--") && !strings.Contains(flags, flag+" ") && !strings.Contains(flags, flag+"\n") {
			t.Errorf("%s: example %q: fleetwatch %s has no %s", name, line, strings.Join(path, " "), flag)
		}
	}
}
