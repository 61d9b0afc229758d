package gitenv

import (
	"strings"
	"testing"
)

func TestEnvDropsLocatingVariables(t *testing.T) {
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	t.Setenv("GIT_INDEX_FILE", "/elsewhere/index")
	t.Setenv("GIT_AUTHOR_NAME", "kept")
	env := strings.Join(Env("GIT_OPTIONAL_LOCKS=0"), "\n")
	for _, gone := range []string{"GIT_DIR=", "GIT_INDEX_FILE="} {
		if strings.Contains(env, gone) {
			t.Errorf("%s survived", gone)
		}
	}
	for _, kept := range []string{"GIT_AUTHOR_NAME=kept", "GIT_OPTIONAL_LOCKS=0"} {
		if !strings.Contains(env, kept) {
			t.Errorf("%s lost", kept)
		}
	}
}

func TestArgsTurnsOffWhatRunsCode(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"rev-parse", "HEAD"}, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false rev-parse HEAD"},
		{[]string{"diff", "a", "b"}, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false diff --no-ext-diff --no-textconv a b"},
		{[]string{"-C", "/p", "-c", "core.quotePath=false", "log", "-1"}, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false -C /p -c core.quotePath=false log --no-ext-diff --no-textconv -1"},
		{[]string{"-C", "/p"}, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false -C /p"},
		{nil, "--no-pager -c core.hooksPath=/dev/null -c core.fsmonitor=false"},
	} {
		if got := strings.Join(Args(tc.in...), " "); got != tc.want {
			t.Errorf("Args(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestGitEnvRunsNoProgram(t *testing.T) {
	t.Setenv("GIT_EXTERNAL_DIFF", "/tmp/evil")
	t.Setenv("GIT_PAGER", "/tmp/evil")
	t.Setenv("GIT_DIR", "/elsewhere/.git")
	env := "\n" + strings.Join(GitEnv("X=1"), "\n") + "\n"
	for _, gone := range []string{"GIT_EXTERNAL_DIFF=", "GIT_PAGER=/tmp/evil", "GIT_DIR="} {
		if strings.Contains(env, gone) {
			t.Errorf("%s survived", gone)
		}
	}
	for _, kept := range []string{"\nGIT_PAGER=cat\n", "\nX=1\n"} {
		if !strings.Contains(env, kept) {
			t.Errorf("%q missing", kept)
		}
	}
}
