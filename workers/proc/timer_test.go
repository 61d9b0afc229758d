package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/look"
)

func TestParseInterval(t *testing.T) {
	for in, want := range map[string]string{
		// anchor's table (test_fleet_watch 105) and its other forms
		"5m": "5min", "10min": "10min", "1h": "1h", "30s": "30s", "300": "300s",
		"1h30m": "1h30min", "2mins": "2min", "3hrs": "3h", "2hours": "2h", "45sec": "45s",
		"10secs": "10s", "1d": "1d", "2days": "2d", "1h 30m": "1h30min", "5MIN": "5min", "0h5m": "5min",
		// what systemd takes besides: weeks, and fractions of whole seconds
		"1w": "1w", "2weeks": "2w", "1w2d": "1w2d", "1.5h": "1.5h", "0.5min": "0.5min", "1.50h": "1.5h", "2.0m": "2min",
	} {
		iv, err := parseInterval(in)
		if err != nil || iv.Systemd() != want {
			t.Errorf("parseInterval(%q) = %q, %v; want %q", in, iv.Systemd(), err, want)
		}
	}
	for in, secs := range map[string]int64{"1.5h": 5400, "0.5min": 30, "2weeks": 14 * 86400, "1h30m": 5400, "0.25m": 15} {
		if iv, _ := parseInterval(in); iv.Seconds != secs {
			t.Errorf("parseInterval(%q).Seconds = %d, want %d", in, iv.Seconds, secs)
		}
	}
	for bad, why := range map[string]string{
		"": "empty", "0": "longer than 0", "0m": "longer than 0", "-5": "longer than 0", "5q": "not an interval",
		"1h30": "not an interval", "m": "not an interval", "5 minutes ago": "not an interval", "1e3": "not an interval",
		"9999999999": "year", "400d": "year", "60w": "year", "0.3s": "whole number of seconds", "0.001m": "whole number of seconds",
		"1.": "not an interval", ".5h": "not an interval", "1.2.3h": "not an interval",
		// systemd reads M as a month: never taken for a minute
		"1M": "month", "1h5M": "month",
	} {
		if iv, err := parseInterval(bad); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("parseInterval(%q) = %q, %v; want an error with %q", bad, iv.Systemd(), err, why)
		}
	}
}

func TestParseSpec(t *testing.T) {
	// anchor's test_fleet_watch 106 and 107
	s, err := ParseSpec("tier=mid,agent=mid-1,interval=5m", "/cwd")
	if err != nil || s.Tier != "mid" || s.Agent != "mid-1" || s.Interval.Raw != "5m" || s.Run {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = ParseSpec("endpoint=h100-executor,agent=a,run=1", "/cwd")
	if err != nil || s.Endpoint != "h100-executor" || !s.Run || s.Interval.Raw != defaultInterval {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = ParseSpec("tier=mid,agent=a,run=yes,worktree=on", "/cwd")
	if err != nil || !s.Run || !s.Worktree || !strings.HasSuffix(strings.Join(WorkArgs("/p", s), " "), "--run --ensure-worktree") {
		t.Fatalf("worktree=on: %+v %v", s, err)
	}
	s, err = ParseSpec(" agent_id = x , tier = small , model = Qwen3 8B , ", "/cwd")
	if err != nil || s.Agent != "x" || s.Model != "Qwen3 8B" {
		t.Fatalf("%+v %v", s, err)
	}
	s, err = ParseSpec("agent-id=x,endpoint=e,registry=conf/endpoints.yaml", "/cwd")
	if err != nil || s.Registry != "/cwd/conf/endpoints.yaml" {
		t.Fatalf("relative registry: %+v %v", s, err)
	}
	for spec, wantErr := range map[string]string{
		"tier=mid":                         "needs agent",
		"agent=a":                          "needs tier",
		"agent=a,tier=mid,colour=red":      `unknown key "colour"`,
		"agent=a,agent=b,tier=mid":         "agent given twice",
		"agent=a,tier=mid,run=maybe":       "run must be",
		"agent=a,tier=mid,worktree=2":      "worktree must be",
		"agent=a,tier=mid,registry=x.yaml": "registry needs endpoint",
		"agent=a,tier=huge":                `unknown tier "huge"`,
		"agent=a,tier=mid,interval=soon":   "interval",
		"agent=a,tier":                     "not key=value",
		"agent=,tier=mid":                  "agent is empty",
		"agent=a\nb,tier=mid":              "control character",
		"agent=a,tier=mid,model=\xff":      "UTF-8",
		"":                                 "needs agent",
	} {
		if _, err := ParseSpec(spec, "/cwd"); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("ParseSpec(%q) = %v, want an error with %q", spec, err, wantErr)
		}
	}
}

func TestCheckUnique(t *testing.T) {
	spec := func(a string) Spec { return Spec{Agent: a, Tier: "mid"} }
	if err := CheckUnique([]Spec{spec("a"), spec("b"), spec("mid_1"), spec("mid-1")}); err != nil {
		t.Fatal(err)
	}
	if err := CheckUnique([]Spec{spec("a"), spec("b"), spec("a")}); err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("same id: %v", err)
	}
	// Two ids that name the same units are as bad as one id twice.
	if err := CheckUnique([]Spec{spec("mid 1"), spec("mid/1")}); err == nil || !strings.Contains(err.Error(), "mid-1") {
		t.Fatalf("same unit name: %v", err)
	}
}

func TestCronSchedule(t *testing.T) {
	for in, want := range map[string]string{
		"1m": "* * * * *", "5m": "*/5 * * * *", "10m": "*/10 * * * *", "15m": "*/15 * * * *",
		"30m": "*/30 * * * *", "60m": "0 * * * *", "1h": "0 * * * *", "2h": "0 */2 * * *",
		"12h": "0 */12 * * *", "24h": "0 0 * * *", "1d": "0 0 * * *", "7d": "0 0 * * 0", "600": "*/10 * * * *",
		"1w": "0 0 * * 0", "0.5h": "*/30 * * * *",
	} {
		iv, _ := parseInterval(in)
		got, note, err := cronSchedule(iv)
		if err != nil || got != want || note != "" {
			t.Errorf("cronSchedule(%s) = %q, %q, %v; want %q", in, got, note, err, want)
		}
	}
	// Cron counts minutes: seconds go to the nearest minute, and say so.
	for in, want := range map[string]string{"30s": "* * * * *", "10s": "* * * * *", "90s": "*/2 * * * *", "5m20s": "*/5 * * * *", "1.5min": "*/2 * * * *", "0.5min": "* * * * *"} {
		iv, _ := parseInterval(in)
		got, note, err := cronSchedule(iv)
		if err != nil || got != want || !strings.Contains(note, in) {
			t.Errorf("cronSchedule(%s) = %q, %q, %v; want %q with a note", in, got, note, err, want)
		}
	}
	// Anchor wrote */90 (hourly) and */7 (uneven at the hour): errors here,
	// naming the nearest intervals cron can keep.
	for in, near := range map[string]string{"7m": "6m or 10m", "90m": "1h or 2h", "1.5h": "1h or 2h", "45m": "30m or 1h", "5h": "4h or 6h", "2d": "1d or 7d", "30d": "7d", "2w": "7d"} {
		iv, _ := parseInterval(in)
		if got, _, err := cronSchedule(iv); err == nil || !strings.Contains(err.Error(), near) {
			t.Errorf("cronSchedule(%s) = %q, %v; want an error naming %s", in, got, err, near)
		}
	}
}

func TestCronLine(t *testing.T) {
	iv, _ := parseInterval("10m")
	line, _, err := CronLine("/opt/fw/fleetwatch", "/srv/my app", Spec{Agent: "s1", Tier: "small", Interval: iv})
	if err != nil {
		t.Fatal(err)
	}
	want := `*/10 * * * * cd '/srv/my app' && mkdir -p var/fleet/logs && /opt/fw/fleetwatch work-once --root '/srv/my app' --once --agent-id s1 --tier small >/dev/null 2>>var/fleet/logs/s1.log`
	if line != want {
		t.Fatalf("got  %s\nwant %s", line, want)
	}
	// % would end the command in cron; ' must survive sh.
	line, _, _ = CronLine("/opt/fw/fleetwatch", "/srv/50%'s", Spec{Agent: "a", Tier: "mid", Interval: iv})
	if !strings.Contains(line, `'/srv/50\%'\''s'`) || strings.Contains(strings.ReplaceAll(line, `\%`, ""), "%") {
		t.Fatalf("escaping: %s", line)
	}
	// A backslash before % would escape the backslash, not the %: the sh
	// quote closes and reopens between them.
	line, _, _ = CronLine("/opt/fw/fleetwatch", `/srv/a\%b`, Spec{Agent: "a", Tier: "mid", Interval: iv})
	if !strings.Contains(line, `'/srv/a\''\%b'`) {
		t.Fatalf("backslash before %%: %s", line)
	}
}

func TestExecWord(t *testing.T) {
	for in, want := range map[string]string{
		"plain": "plain", "/a b/c": `"/a b/c"`, "50%": "50%%", "$HOME": "$$HOME", `it's`: `"it's"`,
		`say "hi"`: `"say \"hi\""`, `back\slash`: `"back\\slash"`, "": `""`, ";": `\;`, "a;b": "a;b",
		"%d $x y": `"%%d $$x y"`,
	} {
		if got := execWord(in); got != want {
			t.Errorf("execWord(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestUnits(t *testing.T) {
	iv, _ := parseInterval("5m")
	sp := Spec{Agent: "mid-1", Tier: "mid", Model: "Qwen3 32B", Interval: iv}
	units, err := Units("/usr/local/bin/fleetwatch", "/srv/app", sp)
	if err != nil || len(units) != 2 {
		t.Fatalf("%v %v", units, err)
	}
	svc, tmr := units[0], units[1]
	if svc.Name != "fleetwatch-app-mid-1.service" || tmr.Name != "fleetwatch-app-mid-1.timer" {
		t.Fatalf("names %s %s", svc.Name, tmr.Name)
	}
	for _, want := range []string{"Type=oneshot\n", "WorkingDirectory=/srv/app\n", "SuccessExitStatus=0 1\n",
		`ExecStart=/usr/local/bin/fleetwatch work-once --root /srv/app --once --agent-id mid-1 --tier mid --model "Qwen3 32B"` + "\n"} {
		if !strings.Contains(svc.Text, want) {
			t.Errorf("service lacks %q:\n%s", want, svc.Text)
		}
	}
	for _, want := range []string{"OnBootSec=2min\n", "OnUnitActiveSec=5min\n", "Persistent=true\n", "Unit=fleetwatch-app-mid-1.service\n", "WantedBy=timers.target\n"} {
		if !strings.Contains(tmr.Text, want) {
			t.Errorf("timer lacks %q:\n%s", want, tmr.Text)
		}
	}
	if p, a, ok := unitOwner(tmr.Text); !ok || p != "/srv/app" || a != "mid-1" {
		t.Errorf("unitOwner = %q %q %v", p, a, ok)
	}
	if _, _, ok := unitOwner("[Unit]\nDescription=someone else's\n"); ok {
		t.Error("unitOwner claims a unit fleetwatch did not write")
	}
	// `@` would make a template instance of the unit name.
	if got := unitStem("/srv/My App!", "a@b"); got != "fleetwatch-my-app-a-b" {
		t.Errorf("unitStem = %s", got)
	}
	for _, bad := range []string{"/srv/app ", "/srv/app\\", "/srv/a\tb"} {
		if _, err := Units("/usr/local/bin/fleetwatch", bad, sp); err == nil {
			t.Errorf("Units in %q: want an error", bad)
		}
	}
	ep := Spec{Agent: "a", Endpoint: "h100", Registry: "/etc/fleet/endpoints.yaml", Run: true, Interval: iv}
	if units, err := Units("/usr/local/bin/fleetwatch", "/srv/app", ep); err != nil || !strings.Contains(units[0].Text,
		"--agent-id a --endpoint h100 --registry /etc/fleet/endpoints.yaml --run\n") || !strings.Contains(units[0].Text, "(endpoint h100)") {
		t.Errorf("endpoint worker: %v\n%v", err, units)
	}
	if _, err := Units("fleetwatch", "/srv/app", sp); err == nil {
		t.Error("a relative binary: want an error")
	}
	if strings.Contains(tmr.Text, "AccuracySec") {
		t.Errorf("a whole-minute interval needs systemd's default accuracy:\n%s", tmr.Text)
	}
	// systemd would fire a 30s timer up to a minute late.
	for _, in := range []string{"30s", "0.5min", "90s"} {
		fast, _ := parseInterval(in)
		sp.Interval = fast
		if units, err := Units("/usr/local/bin/fleetwatch", "/srv/app", sp); err != nil || !strings.Contains(units[1].Text, "\nAccuracySec=1s\n") {
			t.Errorf("interval %s: %v\n%v", in, err, units)
		}
	}
}

func TestParseTimespan(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1d 2h 3min 4.500s": 26*time.Hour + 3*time.Minute + 4500*time.Millisecond, "250ms": 250 * time.Millisecond, "1w": 7 * 24 * time.Hour,
		// systemd's month and year: 30.44 and 365.25 days
		"1month": 2629800 * time.Second, "2y 1month 1w": 2*31557600*time.Second + 2629800*time.Second + 7*24*time.Hour,
	} {
		if got, err := parseTimespan(in); err != nil || got != want {
			t.Errorf("parseTimespan(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := parseTimespan("soon"); err == nil {
		t.Error("parseTimespan(soon): want an error")
	}
}

func TestReadStates(t *testing.T) {
	dir := t.TempDir()
	sd := filepath.Join(dir, filepath.FromSlash(look.StateDir))
	if err := os.MkdirAll(sd, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"mid-1.json":    `{"pid":12,"agent_id":"mid-1","tier":"mid","plan":"in-progress/x.md","started":1764460800.5,"last_heartbeat":"2025-11-30T00:05:00Z","state":"running","exit_code":null}`,
		"small-1.json":  `{"state":"idle","exit_code":1}`,
		"broken.json":   `{"state":`,
		"bad-time.json": `{"started":"yesterday"}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(sd, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	states, problems := look.ReadStates(dir)
	if len(states) != 2 || len(problems) != 2 {
		t.Fatalf("states %+v problems %q", states, problems)
	}
	m, s := states[0], states[1]
	if m.AgentID != "mid-1" || m.PID != 12 || m.Started.Unix() != 1764460800 || m.LastHeartbeat.UTC().Format(time.RFC3339) != "2025-11-30T00:05:00Z" || m.ExitCode != nil {
		t.Errorf("mid-1: %+v", m)
	}
	// No agent_id: the file name says who it is.
	if s.AgentID != "small-1" || s.ExitCode == nil || *s.ExitCode != 1 || !s.Started.IsZero() {
		t.Errorf("small-1: %+v", s)
	}
	if states, problems := look.ReadStates(t.TempDir()); len(states)+len(problems) != 0 {
		t.Errorf("no state dir: %v %v", states, problems)
	}
}

// systemctl show prints NextElapseUSecMonotonic with format_timespan, whose
// units include "month" and "y" (systemd-analyze timespan 40d prints
// "1month 1w 2d 13h 30min"). On any host up for more than a month
// parseTimespan fails, monotonicToWall returns "" and `watch status` says
// "nothing scheduled" for a timer that is scheduled.
func TestParseTimespanLongUptime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"1month 1w 2d 13h 30min 2.500s": time.Duration(30.44*24*float64(time.Hour)) + 9*24*time.Hour + 13*time.Hour + 30*time.Minute + 2500*time.Millisecond,
		"1y 1month 4d 7h 30min":         time.Duration(365.25*24*float64(time.Hour)) + time.Duration(30.44*24*float64(time.Hour)) + 4*24*time.Hour + 7*time.Hour + 30*time.Minute,
	} {
		got, err := parseTimespan(in)
		if err != nil {
			t.Errorf("parseTimespan(%q): %v (status would say \"nothing scheduled\")", in, err)
			continue
		}
		if d := got - want; d < -time.Hour || d > time.Hour {
			t.Errorf("parseTimespan(%q) = %v, want about %v", in, got, want)
		}
	}
}
