package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		text, integration, err string
	}{
		{text: "", integration: ""},
		{text: "# nothing set yet\n", integration: ""},
		{text: "integration: trunk\n", integration: "trunk"},
		{text: "integration: release/2.x   # lands here\n", integration: "release/2.x"},
		{text: "\n\nintegrashun: dev\n", err: "3: unknown key \"integrashun\""},
		{text: "integration: dev\nintegration: main\n", err: "2: integration is set twice (first at line 1)"},
		{text: "integration: x.lock\n", err: "1: integration: git refuses branch name \"x.lock\""},
		{text: "integration: [a, b]\n", err: "1: integration: want a branch name"},
		{text: "integration:\n", err: "1: integration: want a branch name"},
		{text: "- dev\n", err: "1: expected settings as `key: value` lines"},
		{text: "integration: dev\n  bad: [\n", err: "2: "},
	} {
		s, err := Parse([]byte(c.text))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.text, err)
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one starting %q", c.text, err, c.err)
		case c.err == "" && s.Integration != c.integration:
			t.Errorf("%q: integration %q, want %q", c.text, s.Integration, c.integration)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error on more than one line: %q", c.text, err)
		}
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if s, err := Load(dir); err != nil || s.Path != "" || s.Integration != "" || s.Checks != nil || s.QueueDepth != 0 {
		t.Fatalf("no file is the defaults: %+v %v", s, err)
	}
	p := filepath.Join(dir, File)
	os.WriteFile(p, []byte("integration: trunk\nqueues: 3\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.HasPrefix(err.Error(), p+`:2: unknown key "queues" (known: integration, checks, queue,`) {
		t.Fatalf("error %v", err)
	}
	os.WriteFile(p, []byte("integration: trunk\n"), 0o644)
	if s, err := Load(dir); err != nil || s.Integration != "trunk" || s.Path != p {
		t.Fatalf("%+v %v", s, err)
	}
	os.Remove(p)
	os.Mkdir(p, 0o755)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a folder named %s: %v", File, err)
	}
}

func TestParseChecks(t *testing.T) {
	s, err := Parse([]byte(`integration: dev
checks:
  - name: test
    run: [go, test, ./...]
    timeout: 90s
  - name: vet.all_1
    run:
      - go
      - vet
      - "./..."
    expect_output: "^ok"
    env:
      GOFLAGS: -count=1
      EMPTY: ""
queue:
  depth: 3
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Checks) != 2 || s.QueueDepth != 3 {
		t.Fatalf("%+v", s)
	}
	a, b := s.Checks[0], s.Checks[1]
	if a.Name != "test" || strings.Join(a.Run, " ") != "go test ./..." || a.Timeout != 90*time.Second || a.ExpectOutput != nil || a.Line != 3 || a.Env != nil {
		t.Errorf("first check %+v", a)
	}
	if b.Name != "vet.all_1" || strings.Join(b.Run, " ") != "go vet ./..." || b.Timeout != DefaultCheckTimeout ||
		b.ExpectOutput == nil || b.ExpectOutput.String() != "^ok" || b.Line != 6 ||
		b.Env["GOFLAGS"] != "-count=1" || len(b.Env) != 2 {
		t.Errorf("second check %+v", b)
	}
	for _, empty := range []string{"checks:\n", "checks: []\n"} {
		if s, err := Parse([]byte(empty)); err != nil || len(s.Checks) != 0 {
			t.Errorf("%q: %+v %v", empty, s, err)
		}
	}
}

func TestParseChecksRefusesBadInput(t *testing.T) {
	for _, c := range []struct{ text, err string }{
		{"checks: go test ./...\n", "1: checks: want a list"},
		{"checks:\n  - go test\n", "2: checks: each check is a mapping"},
		{"checks:\n  - run: [true]\n", "2: check: name is required"},
		{"checks:\n  - name: t\n", "2: check t: run is required"},
		{"checks:\n  - name: t\n    run: go test ./...\n", "3: run: want a list of words, no shell runs it: run: [go, test, ./...]"},
		{"checks:\n  - name: t\n    run: []\n", "3: run: want a non-empty list"},
		{"checks:\n  - name: t\n    run: [\"\", x]\n", "3: run: the program (first word) is empty"},
		{"checks:\n  - name: t\n    run: [go, [x]]\n", "3: run: each word is a string"},
		{"checks:\n  - name: t\n    run:\n", "3: run: want a non-empty list"},
		{"checks:\n  - name: a/b\n    run: [x]\n", "2: check name: want letters"},
		{"checks:\n  - name: ..\n    run: [x]\n", "2: check name: want letters"},
		{"checks:\n  - name: t\n    run: [x]\n  - name: t\n    run: [y]\n", "4: check \"t\" is declared twice (first at line 2)"},
		{"checks:\n  - name: t\n    run: [x]\n    name: u\n", "4: check: name is set twice (first at line 2)"},
		{"checks:\n  - name: t\n    run: [x]\n    timeout: 90\n", "4: timeout: want a duration with its unit, like 90s or 10m, not \"90\""},
		{"checks:\n  - name: t\n    run: [x]\n    timeout: 0s\n", "4: timeout: 0s is out of range"},
		{"checks:\n  - name: t\n    run: [x]\n    timeout: 25h\n", "4: timeout: 25h0m0s is out of range"},
		{"checks:\n  - name: t\n    run: [x]\n    timeout: -1m\n", "4: timeout: -1m0s is out of range"},
		{"checks:\n  - name: t\n    run: [x]\n    expect_output: \"(ok\"\n", "4: expect_output: error parsing regexp"},
		{"checks:\n  - name: t\n    run: [x]\n    expect_output:\n", "4: expect_output: want a regular expression"},
		{"checks:\n  - name: t\n    run: [x]\n    shell: bash\n", "4: unknown key \"shell\" in a check (known: name, run, timeout, expect_output, env, retries, cache)"},
		{"checks:\n  - name: t\n    run: [x]\n    retries: 4\n", "4: retries: want a whole number from 0 to 3"},
		{"checks:\n  - name: t\n    run: [x]\n    env: [A=1]\n", "4: env: want NAME: value lines"},
		{"checks:\n  - name: t\n    run: [x]\n    env:\n      1A: x\n", "5: env: \"1A\" is not a variable name"},
		{"checks:\n  - name: t\n    run: [x]\n    env:\n      PORT: \"80\"\n", "5: env: PORT is set by fleetwatch"},
		{"checks:\n  - name: t\n    run: [x]\n    env:\n      FLEET_TREE: x\n", "5: env: FLEET_TREE is set by fleetwatch"},
		{"checks:\n  - name: t\n    run: [x]\n    env:\n      A: [1]\n", "5: env: A: want a plain value"},
		{"queue: 3\n", "1: queue: want a mapping"},
		{"queue:\n  depth: 0\n", "2: queue: depth: want a whole number from 1 to 8"},
		{"queue:\n  depth: 9\n", "2: queue: depth: want a whole number from 1 to 8"},
		{"queue:\n  depth: two\n", "2: queue: depth: want a whole number"},
		{"queue:\n  depth: 2\n  width: 3\n", "3: unknown key \"width\" in queue (known: depth, batch, wait, max_wait)"},
		{"queue:\n  depth: 2\n  depth: 3\n", "3: queue: depth is set twice"},
		{"queue:\n  batch: 0\n", "2: queue: batch: want a whole number from 1 to 64"},
		{"queue:\n  wait: 30\n", "2: queue: wait: want a duration with its unit"},
		{"queue:\n  max_wait: -1h\n", "2: queue: max_wait: -1h0m0s is out of range"},
		{"queue: {depth: 2}\nqueue: {depth: 3}\n", "2: queue is set twice (first at line 1)"},
	} {
		_, err := Parse([]byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.err) {
			t.Errorf("%q: error %v, want one starting %q", c.text, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error on more than one line: %q", c.text, err)
		}
	}
}

func TestParseBatchQueue(t *testing.T) {
	s, err := Parse([]byte("checks:\n  - {name: t, run: [x], retries: 1}\nqueue: {batch: 8, wait: 30s, max_wait: 2h}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.QueueBatch != 8 || s.QueueWait != 30*time.Second || s.QueueMaxWait != 2*time.Hour || s.Checks[0].Retries != 1 {
		t.Fatalf("%+v", s)
	}
}

func TestParseRetries(t *testing.T) {
	if s, err := Parse(nil); err != nil || s.TaskRetries() != DefaultRetries {
		t.Errorf("unset: %d %v", s.TaskRetries(), err)
	}
	if s, err := Parse([]byte("retries: 5\n")); err != nil || s.TaskRetries() != 5 {
		t.Errorf("retries: 5: %d %v", s.TaskRetries(), err)
	}
	for _, bad := range []string{"retries: 0\n", "retries: many\n", "retries: [1]\n", "retries: 101\n"} {
		if _, err := Parse([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "1: retries: want") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestWaitForAnswer(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) (Settings, error) {
		if err := os.WriteFile(filepath.Join(dir, File), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return Load(dir)
	}
	if s, err := write("integration: main\n"); err != nil || s.AnswerWait() != DefaultWaitForAnswer {
		t.Fatalf("unset: %v %v", s.AnswerWait(), err)
	}
	if s, err := write("wait_for_answer: 2h\n"); err != nil || s.AnswerWait() != 2*time.Hour {
		t.Fatalf("2h: %v %v", s.AnswerWait(), err)
	}
	for _, bad := range []string{"wait_for_answer: soon\n", "wait_for_answer: -1m\n", "wait_for_answer: 48h\n"} {
		if _, err := write(bad); err == nil || !strings.Contains(err.Error(), ":1:") || !strings.Contains(err.Error(), "wait_for_answer") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
