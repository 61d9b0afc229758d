package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
)

// cron (vixie/cronie) reads `\` as escaping the next character and ends the
// command at the first unescaped `%`. CronLine writes every `%` as `\%`, but
// a `\` already in front of it (a folder or agent id with `\%` in it) turns
// `\\%` into "escaped backslash, then a bare %": the command is cut there and
// sh gets an unterminated quote.
func TestCronLineBackslashPercent(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	tmp := t.TempDir()
	project := filepath.Join(tmp, `odd\%dir`)
	if err := os.MkdirAll(project, 0o755); err != nil {
		t.Fatal(err)
	}
	argsFile := filepath.Join(tmp, "args")
	bin := filepath.Join(tmp, "fakefw")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + argsFile + "\n"
	testkit.WriteScript(t, bin, script)
	iv, err := parseInterval("10m")
	if err != nil {
		t.Fatal(err)
	}
	agent := `a\%b`
	line, _, err := CronLine(bin, project, Spec{Agent: agent, Tier: "small", Interval: iv})
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.SplitN(line, " ", 6)
	cmd := cronUnescape(fields[5])
	out, err := exec.Command(sh, "-c", cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("cron would run %q\nfrom line %q\nsh: %v %s", cmd, line, err, out)
	}
	data, _ := os.ReadFile(argsFile)
	got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	want := append([]string(nil), WorkArgs(project, Spec{Agent: agent, Tier: "small"})...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("argv %q, want %q", got, want)
	}
}

// cronUnescape is cronie's do_command.c: `\%` becomes `%`, any other `\x`
// stays, and the first unescaped `%` ends the command.
func cronUnescape(s string) string {
	var b []byte
	escaped := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if escaped {
			if c == '%' {
				b[len(b)-1] = '%'
			} else {
				b = append(b, c)
			}
			escaped = false
			continue
		}
		if c == '\\' {
			escaped = true
			b = append(b, c)
			continue
		}
		if c == '%' {
			break
		}
		b = append(b, c)
	}
	return string(b)
}
