package proc

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

func TestEditor(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	cases := []struct {
		vars map[string]string
		want []string
	}{
		{map[string]string{"VISUAL": "code -w", "EDITOR": "vi"}, []string{"code", "-w"}},
		{map[string]string{"VISUAL": "  ", "EDITOR": "vi"}, []string{"vi"}},
		{map[string]string{"EDITOR": `"/opt/My Editor/bin/ed" --wait 'a b' c\ d`}, []string{"/opt/My Editor/bin/ed", "--wait", "a b", "c d"}},
	}
	for _, c := range cases {
		got, err := Editor(env(c.vars))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Editor(%v) = %q, %v; want %q", c.vars, got, err, c.want)
		}
	}
	if _, err := Editor(env(nil)); !errors.Is(err, ErrNoEditor) {
		t.Errorf("no editor: %v", err)
	}
	if _, err := Editor(env(map[string]string{"EDITOR": `vi "unclosed`})); err == nil {
		t.Error("an unfinished quote was accepted")
	}
}

// The command runs the editor on the file with no shell between: a file
// name with spaces and quotes arrives as one argument.
func TestEditorCmdRunsWithoutAShell(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "ed.sh")
	testkit.WriteScript(t, script, "#!/bin/sh\nprintf '%s|' \"$@\" > \""+filepath.Join(dir, "args")+"\"\n")
	target := filepath.Join(dir, `it's "a" plan.md`)
	if err := EditorCmd([]string{script, "-w"}, target).Run(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "args"))
	if string(got) != "-w|"+target+"|" {
		t.Errorf("the editor got %q", got)
	}
}
