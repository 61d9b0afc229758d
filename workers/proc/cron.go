package proc

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// cronStep is one interval cron repeats evenly, and how it writes it.
type cronStep struct {
	minutes int64
	sched   string
}

// cronSteps are every interval a single crontab line repeats evenly: a
// divisor of an hour, a divisor of a day in whole hours, a day, a week.
// `*/7` would run at :56 and again at :00, and anchor's `*/90` ran hourly.
var cronSteps = func() []cronStep {
	var out []cronStep
	for m := int64(1); m < 60; m++ {
		if 60%m == 0 {
			s := fmt.Sprintf("*/%d * * * *", m)
			if m == 1 {
				s = "* * * * *"
			}
			out = append(out, cronStep{m, s})
		}
	}
	for h := int64(1); h < 24; h++ {
		if 24%h == 0 {
			s := fmt.Sprintf("0 */%d * * *", h)
			if h == 1 {
				s = "0 * * * *"
			}
			out = append(out, cronStep{h * 60, s})
		}
	}
	return append(out, cronStep{1440, "0 0 * * *"}, cronStep{7 * 1440, "0 0 * * 0"})
}()

// cronSchedule returns the crontab time fields for iv. Cron counts whole
// minutes, so seconds round to the nearest minute (at least one) and note
// says so; an interval cron cannot repeat evenly is an error that names the
// nearest ones it can.
func cronSchedule(iv Interval) (sched, note string, err error) {
	minutes := (iv.Seconds + 30) / 60
	if minutes < 1 {
		minutes = 1
	}
	if minutes*60 != iv.Seconds {
		note = fmt.Sprintf("cron counts whole minutes: %s runs every %s", iv.Raw, minutesText(minutes))
	}
	var below, above int64
	for _, st := range cronSteps {
		if st.minutes == minutes {
			return st.sched, note, nil
		}
		if st.minutes < minutes {
			below = st.minutes
		} else if above == 0 {
			above = st.minutes
		}
	}
	near := minutesText(below)
	if above != 0 {
		near += " or " + minutesText(above)
	}
	return "", "", fmt.Errorf("cron cannot repeat every %s evenly (nearest it can: %s); choose one of those, or use a systemd timer", iv.Raw, near)
}

func minutesText(m int64) string {
	switch {
	case m%1440 == 0:
		return fmt.Sprintf("%dd", m/1440)
	case m%60 == 0:
		return fmt.Sprintf("%dh", m/60)
	}
	return fmt.Sprintf("%dm", m)
}

// CronLogDir is where cron watchers append their output, relative to the
// project: beside the worker state files, out of the plans tree.
const CronLogDir = "var/fleet/logs"

// CronLine is one crontab line running s in project with bin, and a note
// when the schedule is not exactly the interval asked for.
func CronLine(bin, project string, s Spec) (line, note string, err error) {
	for _, p := range []string{bin, project, s.Agent} {
		if err := PlainText(p); err != nil {
			return "", "", err
		}
	}
	sched, note, err := cronSchedule(s.Interval)
	if err != nil {
		return "", "", fmt.Errorf("interval: %v", err)
	}
	argv := append([]string{bin}, WorkArgs(project, s)...)
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = cronWord(a)
	}
	// The driver writes its own account to the agent's log, the one the UI
	// follows; work-once's errors join it there. Its stdout (the claimed
	// paths, for scripts) would only repeat what the log says.
	log := filepath.ToSlash(filepath.Join(CronLogDir, tree.SafeID(s.Agent)+".log"))
	cmd := fmt.Sprintf("cd %s && mkdir -p %s && %s >/dev/null 2>>%s", cronWord(project), CronLogDir, strings.Join(words, " "), log)
	return sched + " " + cmd, note, nil
}

// cronWord quotes a word for /bin/sh, then for cron, which turns a bare %
// into a newline (cutting the command short) and reads a backslash as
// escaping the next character. Every % is written \%; but a backslash of the
// word's own in front of it would escape that backslash instead and leave
// the % bare, so there two single quotes go between them, closing and
// reopening the sh quote: cron gives sh 'a\' then '%b', which is a\%b.
// shWord quotes every word holding a %, so they always land inside quotes.
func cronWord(s string) string {
	q := shWord(s)
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		if q[i] == '%' {
			if i > 0 && q[i-1] == '\\' {
				b.WriteString("''")
			}
			b.WriteString(`\`)
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// shWord quotes a word for /bin/sh, which runs crontab commands.
func shWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@,+-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
