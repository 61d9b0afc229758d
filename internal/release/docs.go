package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/goreleaser/nfpm/v2/files"
)

// systemdNote is shipped instead of unit files: `fleetwatch watch install`
// writes a service and a timer per project and worker (the project's
// folder, the worker's tier and interval are in them), so no static unit
// could stand for them.
const systemdNote = `fleetwatch ships no systemd unit.

` + "`fleetwatch watch install --worker agent=mid-1,tier=mid,interval=5m`" + ` writes a
user service and timer for each worker of a project, under
~/.config/systemd/user (or $XDG_CONFIG_HOME/systemd/user), naming the
project's folder and this binary; ` + "`fleetwatch watch uninstall`" + ` removes them.
See ` + "`fleetwatch help watch`" + `.
`

// completions are the shells' completion scripts: where each system's
// shell reads them, by packager ("" for both). Debian's zsh reads
// vendor-completions, Fedora's site-functions.
var completions = []struct{ shell, file, dst, packager string }{
	{"bash", "fleetwatch.bash", "/usr/share/bash-completion/completions/fleetwatch", ""},
	{"zsh", "_fleetwatch", "/usr/share/zsh/vendor-completions/_fleetwatch", "deb"},
	{"zsh", "_fleetwatch", "/usr/share/zsh/site-functions/_fleetwatch", "rpm"},
	{"fish", "fleetwatch.fish", "/usr/share/fish/vendor_completions.d/fleetwatch.fish", ""},
}

// writeDocs writes the man pages (this program, as manArg) and has the
// binary bin (one that runs here) write its completions into dir, with the
// note on systemd units, and returns them as the packages' contents.
func writeDocs(ctx context.Context, bin, dir string, st stamp) (files.Contents, error) {
	man := filepath.Join(dir, "man")
	if err := os.MkdirAll(man, 0o755); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if _, err := runBin(ctx, self, st.date, manArg, man, st.version); err != nil {
		return nil, err
	}
	pages, err := filepath.Glob(filepath.Join(man, "*.1"))
	if err != nil || len(pages) == 0 {
		return nil, fmt.Errorf("%s wrote no man page into %s", manArg, man)
	}
	var out files.Contents
	for _, p := range pages {
		if err := gzipFile(p); err != nil {
			return nil, err
		}
		out = append(out, content(p+".gz", "/usr/share/man/man1/"+filepath.Base(p)+".gz", ""))
	}
	for _, c := range completions {
		script, err := runBin(ctx, bin, st.date, "completion", c.shell)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, c.file)
		if err := os.WriteFile(p, script, 0o644); err != nil {
			return nil, err
		}
		out = append(out, content(p, c.dst, c.packager))
	}
	note := filepath.Join(dir, "README.systemd")
	if err := os.WriteFile(note, []byte(systemdNote), 0o644); err != nil {
		return nil, err
	}
	return append(out, content(note, "/usr/share/doc/fleetwatch/README.systemd", "")), nil
}

func content(src, dst, packager string) *files.Content {
	return &files.Content{Source: src, Destination: dst, Packager: packager, FileInfo: &files.ContentFileInfo{Mode: 0o644}}
}

// runBin runs bin (the built fleetwatch, or this program) with args and
// returns its stdout. Its environment is bare, so no default that names a
// person (operator-$USER) takes the releaser's name, and the man pages
// carry the commit's date.
func runBin(ctx context.Context, bin string, date time.Time, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "USER=$USER", "HOME=/nonexistent",
		"SOURCE_DATE_EPOCH=" + strconv.FormatInt(date.Unix(), 10)}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %v: %s", bin, args, err, bytes.TrimSpace(errb.Bytes()))
	}
	return out, nil
}

// gzipFile writes p.gz beside p, with no name or time in its header, as
// Debian wants man pages: the same page compresses to the same bytes.
func gzipFile(p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(p+".gz", b.Bytes(), 0o644)
}
