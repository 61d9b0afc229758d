package proc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/workers/look"
	"github.com/fleetwatch/fleetwatch/workers/tree"
)

// StartDetached starts `bin args...` the way Start starts a worker: in its
// own session (it outlives this process and a closed terminal), working
// directory project, stdin /dev/null, stdout and stderr appended to
// var/fleet/logs/<logName>, reaped by a goroutine. It is how the cockpit
// hands a long job (a peer review, a landing) to a fleetwatch child and
// goes on drawing. It returns the log's path.
func StartDetached(bin, project, logName string, args ...string) (string, error) {
	log, _, err := startDetached(bin, project, logName, args...)
	return log, err
}

// startDetached is StartDetached; done gets the child's Wait error once
// it exits.
func startDetached(bin, project, logName string, args ...string) (string, <-chan error, error) {
	if logName == "" || strings.ContainsAny(logName, "/\\") || logName == "." || logName == ".." {
		return "", nil, fmt.Errorf("%q is not a log file name", logName)
	}
	logPath := filepath.Join(project, filepath.FromSlash(look.LogDir), logName)
	if err := tree.FleetDir(project); err != nil {
		return "", nil, err
	}
	look.RotateLog(logPath)
	log, err := tree.OpenIn(project, logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		return "", nil, err
	}
	defer log.Close()
	fmt.Fprintf(log, "%s %s starting %s %s\n", time.Now().UTC().Format(look.LogTimeLayout), look.StreamFleet, filepath.Base(bin), strings.Join(QuoteArgs(args), " "))
	cmd := exec.Command(bin, args...)
	cmd.Dir = project
	cmd.Stdout, cmd.Stderr = log, log // a file: the child writes it directly
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		err = fmt.Errorf("start %s: %v", bin, tree.ErrText(err))
		fmt.Fprintf(log, "%s %s %v\n", time.Now().UTC().Format(look.LogTimeLayout), look.StreamFleet, err)
		return "", nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return logPath, done, nil
}

// StartDetachedAs is StartDetached in t's project, asked through t: a
// viewer's tree (t.ReadOnly) is refused with planfs.ErrReadOnly before the
// log is touched or anything starts.
func StartDetachedAs(t *planfs.Tree, bin, logName string, args ...string) (string, error) {
	if err := t.Writable(); err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(look.LogDir, logName), err)
	}
	return StartDetached(bin, t.Project, logName, args...)
}

// StartDetachedWatched is StartDetachedAs for a job whose end the caller
// reports (a landing started from the cockpit): done gets the child's
// Wait error once it exits.
func StartDetachedWatched(t *planfs.Tree, bin, logName string, args ...string) (string, <-chan error, error) {
	if err := t.Writable(); err != nil {
		return "", nil, fmt.Errorf("%s: %w", filepath.Join(look.LogDir, logName), err)
	}
	return startDetached(bin, t.Project, logName, args...)
}
