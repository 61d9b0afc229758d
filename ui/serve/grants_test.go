package serve

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each line's from=, no-pty/restrict and command= bind to what that line
// grants: a session uses the lines whose from= allows its address, is an
// operator or viewer per project only through them (a viewers line
// demoting wherever it is), and gets the strictest rules among them.
func TestGrantsBindToTheLine(t *testing.T) {
	office := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 40000}
	type want struct {
		ok      bool
		a, b    Role
		viewer  bool
		noPTY   bool
		command string
		lines   string
	}
	for _, c := range []struct {
		name       string
		ops, views string // lines, K for the key
		addr       net.Addr
		want       want
	}{
		{"an office-only operators line is not used from elsewhere", `from="10.0.0.0/8",projects="A" K`, `projects="B" K`, here,
			want{ok: true, b: ViewerRole, viewer: true, lines: "views:1"}},
		{"from the office it is", `from="10.0.0.0/8",projects="A" K`, `projects="B" K`, office,
			want{ok: true, a: OperatorRole, b: ViewerRole, viewer: true, lines: "ops:1 views:1"}},
		{"a restricted line restricts the whole session", `restrict,command="board",projects="A" K`, `projects="B" K`, here,
			want{ok: true, a: OperatorRole, b: ViewerRole, viewer: true, noPTY: true, command: "board", lines: "ops:1 views:1"}},
		{"a restricted line not used restricts nothing", `from="10.0.0.0/8",no-pty,command="board --json" K` + "\n" + `projects="B" K`, ``, here,
			want{ok: true, b: OperatorRole, lines: "ops:2"}},
		{"used, it does", `from="10.0.0.0/8",no-pty,command="board --json" K` + "\n" + `projects="B" K`, ``, office,
			want{ok: true, a: OperatorRole, b: OperatorRole, noPTY: true, command: "board --json", lines: "ops:1 ops:2"}},
		{"no line allows the address", `from="10.0.0.0/8" K`, ``, here, want{}},
		{"a viewers line demotes from anywhere", `K`, `from="10.0.0.0/8" K`, here,
			want{ok: true, a: ViewerRole, b: ViewerRole, viewer: true, lines: "ops:1"}},
		{"two operators lines add up", `projects="A" K` + "\n" + `projects="B" K`, ``, here,
			want{ok: true, a: OperatorRole, b: OperatorRole, lines: "ops:1 ops:2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, line := pubKey(t)
			dir := t.TempDir()
			ops, views := filepath.Join(dir, "ops"), filepath.Join(dir, "views")
			write(t, ops, strings.ReplaceAll(c.ops, "K", line)+"\n")
			write(t, views, strings.ReplaceAll(c.views, "K", line)+"\n")
			r, err := LoadKeys(ops, views, nil)
			if err != nil {
				t.Fatal(err)
			}
			id, ok := r.Lookup(k, c.addr)
			got := want{ok: ok, viewer: id.Viewer, noPTY: id.Rules.NoPTY, command: id.Rules.Command,
				lines: strings.ReplaceAll(strings.Join(id.Lines, " "), dir+"/", "")}
			if ok {
				got.a, got.b = id.RoleOn("A"), id.RoleOn("B")
			}
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// Two lines of one key forcing different commands cannot both hold: the
// files are refused, naming both lines; the same command on both is fine.
func TestGrantsRefuseTwoCommands(t *testing.T) {
	_, line := pubKey(t)
	dir := t.TempDir()
	ops, views := filepath.Join(dir, "ops"), filepath.Join(dir, "views")
	write(t, ops, "# team\n"+`command="board" `+line+" alice\n")
	write(t, views, `command="board --json",projects="web" `+line+" alice\n")
	_, err := LoadKeys(ops, views, nil)
	want := views + `:1: command="board --json", but this key's line at ` + ops + `:2 forces command="board"`
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("two forced commands give %v, want one line starting %s", err, want)
	}
	write(t, views, `command="board",projects="web" `+line+" alice\n")
	if _, err := LoadKeys(ops, views, nil); err != nil {
		t.Errorf("the same command on both lines: %v", err)
	}
}

// A key on thousands of lines is read and looked up in linear time.
func TestGrantsManyLines(t *testing.T) {
	k, line := pubKey(t)
	var b strings.Builder
	for i := range 8000 {
		fmt.Fprintf(&b, "command=\"board\",projects=\"p%d\" %s\n", i, line)
	}
	ops := filepath.Join(t.TempDir(), "ops")
	write(t, ops, b.String())
	start := time.Now()
	r, err := LoadKeys(ops, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := r.Lookup(k, here)
	if !ok || len(id.Lines) != 8000 || id.RoleOn("p7999") != OperatorRole || !strings.HasSuffix(lines(id), " and 7996 more") {
		t.Errorf("8000 lines: %v %d lines, %q", ok, len(id.Lines), lines(id))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("8000 lines of one key took %v to read and look up", d)
	}
}
