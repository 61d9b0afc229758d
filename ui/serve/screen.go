package serve

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
)

// screen draws a session's frames on its terminal, in place of Bubble
// Tea's renderer: that one wakes frameRate times a second for ever and,
// once a message has left the frame as it was, copies the whole frame at
// each wake-up to find so (some 2 ms of CPU a second per idle session).
// A screen does nothing until a frame differs; then it writes the lines
// that changed, at most frameRate times a second, from a timer of its own.
//
// What it writes is what Bubble Tea's standard renderer writes: the
// alternate screen, a hidden cursor, bracketed paste, and each frame as
// the lines that changed since the last.
type screen struct {
	out   io.Writer
	every time.Duration // the shortest time between two writes

	mu            sync.Mutex
	frame         string   // the newest frame
	drawn         []string // the lines on the terminal
	width, height int
	due           *time.Timer // a write is waiting for it
	wrote         time.Time
	closed        bool
}

// frameRate caps how often a session's screen is written: fluid for
// tables, and a change waits at most a frame's time (none when the last
// write is older).
const frameRate = 30

func newScreen(out io.Writer, fps int) *screen {
	return &screen{out: out, every: time.Second / time.Duration(fps)}
}

// open takes the terminal as the standard renderer does.
func (s *screen) open() {
	_, _ = io.WriteString(s.out, ansi.HideCursor+ansi.SetAltScreenSaveCursorMode+ansi.EraseEntireScreen+
		ansi.CursorHomePosition+ansi.HideCursor+ansi.SetBracketedPasteMode)
}

// close writes the last frame and gives the terminal back; nothing is
// written after.
func (s *screen) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.due != nil {
		s.due.Stop()
	}
	s.flushLocked()
	s.closed = true
	_, _ = io.WriteString(s.out, ansi.EraseEntireLine+"\r"+ansi.ResetBracketedPasteMode+ansi.ShowCursor+
		ansi.ResetAltScreenSaveCursorMode+ansi.ShowCursor)
}

// resize has the next frame drawn whole, at the terminal's new size.
func (s *screen) resize(w, h int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.width, s.height, s.drawn = w, h, nil
}

// show takes a frame; one equal to the newest costs a comparison.
func (s *screen) show(frame string) {
	if frame == "" {
		frame = " "
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || (frame == s.frame && s.drawn != nil) {
		return
	}
	s.frame = frame
	s.scheduleLocked()
}

// scheduleLocked writes soon: at once when the last write is a frame's
// time ago, else when it will be.
func (s *screen) scheduleLocked() {
	if s.due != nil || s.closed {
		return
	}
	wait := max(0, s.every-time.Since(s.wrote))
	s.due = time.AfterFunc(wait, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.due = nil
		if !s.closed {
			s.flushLocked()
		}
	})
}

// flushLocked writes the lines of the newest frame that differ from what
// the terminal shows, as the standard renderer's flush does.
func (s *screen) flushLocked() {
	if s.frame == "" {
		return
	}
	lines := strings.Split(s.frame, "\n")
	if s.height > 0 && len(lines) > s.height {
		lines = lines[len(lines)-s.height:]
	}
	var b bytes.Buffer
	// The carriage return changes nothing on the terminal; readers of
	// the stream (tests, logs) split lines at it, so a frame's first line
	// is not read as the end of the last frame's.
	b.WriteString(ansi.CursorHomePosition + "\r")
	for i, line := range lines {
		last := i == len(lines)-1
		if i < len(s.drawn) && s.drawn[i] == line {
			if !last {
				b.WriteByte('\n')
			}
			continue
		}
		if s.width > 0 {
			line = ansi.Truncate(line, s.width, "")
		}
		b.WriteString(line)
		if ansi.StringWidth(line) < s.width {
			b.WriteString(ansi.EraseLineRight)
		}
		if !last {
			b.WriteString("\r\n")
		}
	}
	if len(s.drawn) > len(lines) {
		b.WriteString(ansi.EraseScreenBelow)
	}
	b.WriteString(ansi.CursorPosition(0, len(lines)))
	_, _ = s.out.Write(b.Bytes())
	s.drawn, s.wrote = lines, time.Now()
}

// raw writes seq (a terminal notification) between two frames: never
// inside one, and not once the screen is closed.
func (s *screen) raw(seq string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		_, _ = io.WriteString(s.out, seq)
	}
}

// drawnModel is a session's model drawn on a screen: Bubble Tea runs
// without a renderer, and each View goes to the screen.
type drawnModel struct {
	tea.Model
	s *screen
}

func (d drawnModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if size, ok := msg.(tea.WindowSizeMsg); ok {
		d.s.resize(size.Width, size.Height)
	}
	next, cmd := d.Model.Update(msg)
	d.Model = next
	return d, cmd
}

func (d drawnModel) View() string {
	d.s.show(d.Model.View())
	return ""
}
