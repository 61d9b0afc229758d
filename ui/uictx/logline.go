package uictx

import (
	"time"

	"github.com/fleetwatch/fleetwatch/internal/termtext"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// LogLine renders one log line: the time of day, a mark for the stream
// (! the executor's stderr, » the driver's own words) and the text.
func LogLine(c *Common, raw string) string {
	at, stream, text, ok := look.ParseLogLine(raw)
	if !ok {
		return termtext.Line(raw)
	}
	mark := " "
	switch stream {
	case look.StreamErr:
		mark = "!"
		if !c.Plain {
			mark = c.St.Bad.Render(mark)
		}
	case look.StreamFleet:
		mark = "»"
		if !c.Plain {
			mark = c.St.Info.Render(mark)
		}
	}
	ts := LogStamp(at.Local(), c.Opt.Tree.Now().Local())
	if !c.Plain {
		ts = c.St.Dim.Render(ts)
	}
	return ts + " " + mark + " " + termtext.Line(text)
}

// LogStamp shows a log line's time of day, or its date when it is from
// another day, in the same eight columns: a two-day-old line must not pass
// for one written this morning.
func LogStamp(at, now time.Time) string {
	y1, m1, d1 := at.Date()
	y2, m2, d2 := now.Date()
	if y1 == y2 && m1 == m2 && d1 == d2 {
		return at.Format("15:04:05")
	}
	return at.Format("  Jan _2")
}
