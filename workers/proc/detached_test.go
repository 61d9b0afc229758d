package proc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/workers/look"
)

func TestStartDetachedLogsBothStreams(t *testing.T) {
	project := t.TempDir()
	log, err := StartDetached("/bin/sh", project, "land.log", "-c", "echo to-out; echo to-err >&2; pwd")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(project, "var", "fleet", "logs", "land.log"); log != want {
		t.Fatalf("log %s, want %s", log, want)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		s := string(b)
		if strings.Contains(s, "to-out") && strings.Contains(s, "to-err") && strings.Contains(s, project) {
			if !strings.Contains(s, "fleet starting sh -c") {
				t.Errorf("no starting line:\n%s", s)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log never got both streams and the project dir:\n%s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	lines, err := look.LogTail(log, 2)
	if err != nil || len(lines) != 2 || lines[1] != project {
		t.Errorf("LogTail = %q, %v", lines, err)
	}
}

func TestStartDetachedRefuses(t *testing.T) {
	project := t.TempDir()
	if _, err := StartDetached("/bin/true", project, "../x.log"); err == nil {
		t.Error("a log name with a slash was taken")
	}
	_, err := StartDetached(filepath.Join(project, "no-such-binary"), project, "review-x.log")
	if err == nil || !strings.Contains(err.Error(), "no-such-binary") {
		t.Fatalf("err = %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(project, "var", "fleet", "logs", "review-x.log"))
	if !strings.Contains(string(b), "no-such-binary") {
		t.Errorf("the failure is not in the log:\n%s", b)
	}
	if lines, err := look.LogTail(filepath.Join(project, "nothing.log"), 5); err != nil || lines != nil {
		t.Errorf("missing log: %q, %v", lines, err)
	}
}
