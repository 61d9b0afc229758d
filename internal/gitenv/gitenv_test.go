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
