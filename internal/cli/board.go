package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"fleetwatch/internal/boardtext"
	"fleetwatch/model"
	"fleetwatch/planfs"
)

// boardFlags are board's flags.
type boardFlags struct {
	common
	once, asJSON, parked, noColor bool
	width                         int
}

func boardCmd() *cobra.Command {
	var f boardFlags
	return leaf("board", "print the lanes as a kanban (--once) or as JSON (--json)", func(fs *pflag.FlagSet) body {
		f.registerRoot(fs)
		fs.StringVar(&f.root, "project", "", "same as --root (anchor's plan_board name)")
		fs.BoolVar(&f.once, "once", false, "print one frame and exit (default: print a new frame on every change)")
		fs.BoolVar(&f.asJSON, "json", false, "print the board as JSON and exit")
		fs.BoolVar(&f.parked, "include-parked", false, "add the Ambiguous and Blocked columns")
		fs.BoolVar(&f.noColor, "no-color", false, "no colour even on a terminal")
		fs.IntVar(&f.width, "width", 0, "columns to fit (default: the terminal's, else 100)")
		return f.run
	})
}

func (f *boardFlags) run(pos []string, stdout, stderr io.Writer) int {
	if len(pos) > 0 {
		return fail(stderr, exitError, "board: unexpected argument %q (the project is --root DIR)", pos[0])
	}
	if f.width < 0 {
		return fail(stderr, exitError, "--width must be positive, not %d", f.width)
	}
	t, err := planfs.Open(findRoot(f.root))
	if err != nil {
		// No tree is exit 2 as with every other command (anchor's
		// plan_board said 1, which scripts read as "nothing to do").
		return fail(stderr, exitError, "%v", err)
	}
	out, isFile := stdout.(*os.File)
	tty := isFile && term.IsTerminal(int(out.Fd()))
	if f.width == 0 {
		f.width = 100
		if tty {
			if w, _, err := term.GetSize(int(out.Fd())); err == nil && w > 0 {
				f.width = w
			}
		}
	}
	color := tty && !f.noColor && os.Getenv("NO_COLOR") == ""
	c256 := strings.Contains(os.Getenv("TERM"), "256color") || os.Getenv("COLORTERM") != ""
	b, now, err := boardtext.Frame(t)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(boardtext.JSON(t, b, now)); err != nil {
			return fail(stderr, exitError, "%v", err)
		}
		return exitOK
	}
	cols := boardtext.Columns(f.parked, c256)
	events, _ := t.RecentEvents(5000)
	fmt.Fprint(stdout, boardtext.Render(b, cols, events, now, f.width, color))
	if f.once {
		return exitOK
	}
	return f.follow(t, b, cols, tty, color, stdout, stderr)
}

// follow prints a new frame, and the moves since the last, on every change.
func (f *boardFlags) follow(t *planfs.Tree, prev *model.Board, cols []boardtext.Column, tty, color bool, stdout, stderr io.Writer) int {
	w, err := t.Watch(200 * time.Millisecond)
	if err != nil {
		return fail(stderr, exitError, "%v", err)
	}
	defer w.Close()
	for ch := range w.Changes() {
		if ch.Err != nil {
			say(stderr, "%v", ch.Err)
			continue
		}
		next, now, err := boardtext.Frame(t)
		if err != nil {
			say(stderr, "%v", err)
			continue
		}
		if tty {
			fmt.Fprint(stdout, "\x1b[H\x1b[2J")
		}
		events, _ := t.RecentEvents(5000)
		fmt.Fprint(stdout, boardtext.Render(next, cols, events, now, f.width, color))
		for _, line := range boardtext.Moves(prev, next, cols) {
			fmt.Fprintln(stdout, line)
		}
		prev = next
	}
	return exitOK
}
