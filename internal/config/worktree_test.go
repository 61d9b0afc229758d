package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseWorktree(t *testing.T) {
	s, err := Parse([]byte(`integration: dev
worktree:
  ports: 3
  env:
    DATABASE_URL: "postgres://127.0.0.1:{port_2}/app_{agent_id}"
    APP_PORT: "{port}"
    COMPOSE: fw-{project}-{slug}
    WHERE: "{worktree}"
  setup: [[createdb, "app_{agent_id}"], [make, migrate, "PORT={port_1}"]]
  teardown: [dropdb, --if-exists, "app_{agent_id}"]
  timeout: 90s
`))
	if err != nil {
		t.Fatal(err)
	}
	w := s.Worktree
	wantEnv := []EnvVar{
		{"DATABASE_URL", "postgres://127.0.0.1:{port_2}/app_{agent_id}", 5},
		{"APP_PORT", "{port}", 6},
		{"COMPOSE", "fw-{project}-{slug}", 7},
		{"WHERE", "{worktree}", 8},
	}
	switch {
	case !w.Set() || w.Line != 3 || w.Ports != 3 || w.Timeout != 90*time.Second || w.CommandTimeout() != 90*time.Second:
		t.Errorf("section %+v", w)
	case !reflect.DeepEqual(w.Env, wantEnv):
		t.Errorf("env (file order) %+v", w.Env)
	case !reflect.DeepEqual(w.Setup, [][]string{{"createdb", "app_{agent_id}"}, {"make", "migrate", "PORT={port_1}"}}):
		t.Errorf("setup %q", w.Setup)
	case !reflect.DeepEqual(w.Teardown, [][]string{{"dropdb", "--if-exists", "app_{agent_id}"}}):
		t.Errorf("teardown (one argv) %q", w.Teardown)
	}

	s, err = Parse([]byte("integration: dev\n"))
	if err != nil || s.Worktree.Set() || s.Worktree.CommandTimeout() != DefaultBackendTimeout {
		t.Errorf("no section: %+v %v", s.Worktree, err)
	}
	s, err = Parse([]byte("worktree:\n  setup: [true]\n"))
	if err != nil || !s.Worktree.Set() || s.Worktree.Ports != 0 || len(s.Worktree.Setup) != 1 || s.Worktree.Timeout != 0 {
		t.Errorf("a setup only: %+v %v", s.Worktree, err)
	}
	// Braces that are no placeholder's (JSON, shell-like ${X}) pass as they are.
	if _, err := Parse([]byte("worktree:\n  env:\n    J: '{\"a\": 1}'\n    S: '${HOME}x'\n")); err == nil {
		t.Errorf("${HOME} names {HOME}, an unknown placeholder: want an error")
	}
	if _, err := Parse([]byte("worktree:\n  env:\n    J: '{\"a\": 1} {}'\n")); err != nil {
		t.Errorf("JSON in a value: %v", err)
	}
}

func TestParseWorktreeRefusesBadInput(t *testing.T) {
	for _, c := range []struct{ text, err string }{
		{"worktree: 3\n", "1: worktree: want a mapping"},
		{"worktree:\n  port: 2\n", `2: worktree: unknown key "port" (known: ports, env, setup, teardown, timeout)`},
		{"worktree:\n  ports: 2\n  ports: 3\n", "3: worktree: ports is set twice (first at line 2)"},
		{"worktree:\n  ports: 0\n", "2: worktree: ports: want a whole number from 1 to 16"},
		{"worktree:\n  ports: 17\n", "2: worktree: ports: want a whole number from 1 to 16"},
		{"worktree:\n  ports: two\n", "2: worktree: ports: want a whole number"},
		{"worktree:\n  env: [A]\n", "2: worktree: env: want NAME: value lines"},
		{"worktree:\n  env:\n    2X: y\n", `3: worktree: env: "2X" is not a variable name`},
		{"worktree:\n  env:\n    FLEET_DB: y\n", "3: worktree: env: FLEET_DB: FLEET_ variables are set by fleetwatch"},
		{"worktree:\n  env:\n    A: [x]\n", "3: worktree: env: A: want a plain value"},
		{"worktree:\n  env:\n    A: x\n    A: y\n", "4: worktree: env: A is set twice"},
		{"worktree:\n  env:\n    A: \"x\\ny\"\n", "3: worktree: env: A: a value is one line"},
		{"worktree:\n  env:\n    A: \"{agent}\"\n", "3: worktree: env: A: unknown placeholder {agent} (known: {agent_id}"},
		{"worktree:\n  env:\n    A: \"{plan}\"\n", "3: worktree: env: A: unknown placeholder {plan}"},
		{"worktree:\n  env:\n    A: \"{port_1}\"\n", "3: worktree: env: A: {port_1} needs ports: 2 or more (ports: 1)"},
		{"worktree:\n  env:\n    A: \"{port_2}\"\n  ports: 2\n", "3: worktree: env: A: {port_2} needs ports: 3 or more (ports: 2)"},
		{"worktree:\n  setup: createdb app\n", "2: worktree: setup: want an argv"},
		{"worktree:\n  setup: []\n", "2: worktree: setup: want an argv"},
		{"worktree:\n  setup: [[a], b]\n", "2: worktree: setup: want an argv"},
		{"worktree:\n  setup: [a, [b]]\n", "2: worktree: setup: each word is a string"},
		{"worktree:\n  setup: [[a], []]\n", "2: worktree: setup: an argv is a non-empty list"},
		{"worktree:\n  teardown: ['', x]\n", "2: worktree: teardown: the program (first word) is empty"},
		{"worktree:\n  setup:\n    - [createdb, \"ok_{agent_id}\"]\n    - [psql, -c, \"{slugg}\"]\n", "4: worktree: setup: unknown placeholder {slugg}"},
		{"worktree:\n  teardown: [dropdb, \"{model}\"]\n", "2: worktree: teardown: unknown placeholder {model}"},
		{"worktree:\n  timeout: 5\n", `2: worktree: timeout: want a duration with its unit, like 90s or 5m, not "5"`},
		{"worktree:\n  timeout: 2h\n", "2: worktree: timeout: 2h0m0s is out of range (above 0, at most 1h0m0s)"},
		{"worktree:\n  timeout: -1s\n", "2: worktree: timeout: -1s is out of range"},
		{"worktree:\n  timeout: [1s]\n", "2: worktree: timeout: want a duration"},
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
