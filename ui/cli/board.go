package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/ui/boardtext"
)

// boardFlags are board's flags.
type boardFlags struct {
	common
	once, asJSON, parked, noColor bool
	width                         int
	claims                        string
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
		fs.StringVar(&f.claims, "claims", "", claimsFlagHelp)
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
		return failErr(stderr, "", err)
	}
	tty := isTerminal(stdout)
	if f.width == 0 {
		f.width = termWidth(stdout, tty)
	}
	color := tty && !f.noColor && os.Getenv("NO_COLOR") == ""
	c256 := strings.Contains(os.Getenv("TERM"), "256color") || os.Getenv("COLORTERM") != ""
	src, err := newBoardSource(t, f.claims)
	if err != nil {
		return failErr(stderr, "", err)
	}
	defer src.close()
	b, now, err := src.frame()
	if err != nil {
		return failErr(stderr, "", err)
	}
	if f.asJSON {
		doc := boardtext.JSON(t, b, now)
		doc.Claims = src.doc()
		return printJSON(stdout, stderr, doc)
	}
	cols := boardtext.Columns(f.parked, c256)
	src.print(stdout, b, cols, now, f.width, color)
	if f.once {
		return exitOK
	}
	return f.follow(src, b, cols, tty, color, stdout, stderr)
}

// termWidth is the terminal w's width, 100 when it is none or says none.
func termWidth(w io.Writer, tty bool) int {
	if !tty {
		return 100
	}
	if cols, _, err := term.GetSize(int(w.(*os.File).Fd())); err == nil && cols > 0 {
		return cols
	}
	return 100
}

// printJSON prints doc as indented JSON.
func printJSON(stdout, stderr io.Writer, doc any) int {
	if err := encodeJSON(stdout, doc, "  "); err != nil {
		return failErr(stderr, "", err)
	}
	return exitOK
}

// follow prints a new frame, and the moves since the last, on every change;
// a remote board also every claims.ReadEvery and on the backend's word.
func (f *boardFlags) follow(src *boardSource, prev *model.Board, cols []boardtext.Column, tty, color bool, stdout, stderr io.Writer) int {
	w, err := src.t.Watch(200 * time.Millisecond)
	if err != nil {
		return failErr(stderr, "", err)
	}
	defer w.Close()
	tick, remote := src.clock()
	for {
		select {
		case ch, ok := <-w.Changes():
			if !ok {
				return exitOK
			}
			if ch.Err != nil {
				say(stderr, "%v", ch.Err)
				continue
			}
		case <-tick:
		case _, ok := <-remote:
			if !ok {
				remote = nil
				continue
			}
		}
		next, now, err := src.frame()
		if err != nil {
			say(stderr, "%v", err)
			continue
		}
		if tty {
			fmt.Fprint(stdout, "\x1b[H\x1b[2J")
		}
		src.print(stdout, next, cols, now, f.width, color)
		for _, line := range boardtext.Moves(prev, next, cols) {
			fmt.Fprintln(stdout, line)
		}
		prev = next
	}
}

// boardSource is where board's frames come from: the tree, or a remote
// claims backend's view (its integration branch, its leases overlaid),
// keeping the last good view when a read fails.
type boardSource struct {
	t      *planfs.Tree
	remote *claims.Opened
	view   *claims.View
	err    error // the last remote read's failure
	stop   func()
}

func newBoardSource(t *planfs.Tree, flag string) (*boardSource, error) {
	remote, err := openRemote(t.Project, flag)
	if err != nil {
		return nil, err
	}
	return &boardSource{t: t, remote: remote, stop: func() {}}, nil
}

// frame is the board now. A remote that cannot be read is an error only
// before its first good read; after, the last good view stays and the
// claims line says why.
func (s *boardSource) frame() (*model.Board, float64, error) {
	if s.remote == nil {
		return boardtext.Frame(s.t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := s.remote.Backend.View(ctx)
	switch {
	case err != nil && s.view == nil:
		return nil, 0, err
	case err != nil:
		s.err = err
	default:
		s.view, s.err = v, nil
	}
	b, now := boardtext.FrameOf(s.t, s.view)
	return b, now, nil
}

// doc is the JSON's claims section; nil for the lease files.
func (s *boardSource) doc() *boardtext.ClaimsDoc {
	if s.remote == nil {
		return nil
	}
	return boardtext.Remote(s.remote.Backend.Name(), s.remote.Where, s.view, s.err)
}

// print writes one frame: for a remote board, the claims line first.
func (s *boardSource) print(w io.Writer, b *model.Board, cols []boardtext.Column, now float64, width int, color bool) {
	if s.remote != nil {
		fmt.Fprintln(w, boardtext.ClaimsLine(s.remote.Where, s.view, now, s.err))
		if s.view != nil {
			for _, n := range backendNotices(s.view.Snapshot) {
				fmt.Fprintln(w, termtext.Line("warning: "+n.File+": "+n.Message))
			}
		}
	}
	events, _ := s.t.RecentEvents(5000)
	fmt.Fprint(w, boardtext.Render(b, cols, events, now, width, color))
}

// clock is what reads a remote board again besides the tree's changes: a
// claims.ReadEvery ticker, and the backend's changes when it says them.
// Both are nil for the lease files.
func (s *boardSource) clock() (<-chan time.Time, <-chan struct{}) {
	if s.remote == nil {
		return nil, nil
	}
	tick := time.NewTicker(claims.ReadEvery)
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = func() { tick.Stop(); cancel() }
	var changes <-chan struct{}
	if w, ok := s.remote.Backend.(claims.Watcher); ok {
		changes = w.Changes(ctx)
	}
	return tick.C, changes
}

func (s *boardSource) close() {
	s.stop()
	if s.remote != nil {
		_ = s.remote.Backend.Close()
	}
}
