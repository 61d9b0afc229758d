package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the packagers nfpm.Get finds
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm"
)

// description is the packages' summary line and text.
const description = `plan engine and cockpit for fleets of AI coding agents
fleetwatch runs a fleet of headless coding agents over a .plans/ tree of
markdown plans, each worker claiming only the plans it is fit for, and is the
terminal cockpit its operator watches and lands their work from.`

// depends is what each package needs at run time: git 2.38 or newer (the
// merge queue's merge-tree --write-tree), in each system's spelling.
var depends = map[string][]string{
	"deb": {"git (>= 1:2.38)"}, // Debian's git carries epoch 1
	"rpm": {"git >= 2.38"},
}

// packageAll writes a .deb and an .rpm for each Linux target in bins, with
// the man pages this program writes and the completions the host's
// binary writes.
func packageAll(ctx context.Context, root, out string, st stamp, targets []target, bins map[target]string) ([]string, error) {
	var linux []target
	for _, t := range targets {
		if t.os == "linux" {
			linux = append(linux, t)
		}
	}
	if len(linux) == 0 {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "fleetwatch-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	host, ok := bins[hostTarget()]
	if !ok {
		host = filepath.Join(tmp, "fleetwatch")
		if err := goBuild(ctx, root, hostTarget(), st, host); err != nil {
			return nil, err
		}
	}
	docs, err := writeDocs(ctx, host, filepath.Join(tmp, "docs"), st)
	if err != nil {
		return nil, err
	}
	var written []string
	for _, t := range linux {
		for _, kind := range []string{"deb", "rpm"} {
			p, err := writePackage(kind, t, st, bins[t], docs, out)
			if err != nil {
				return nil, err
			}
			written = append(written, p)
		}
	}
	return written, nil
}

// writePackage writes one package of kind (deb, rpm) for t into out.
func writePackage(kind string, t target, st stamp, bin string, docs files.Contents, out string) (string, error) {
	contents := files.Contents{{Source: bin, Destination: "/usr/bin/fleetwatch", FileInfo: &files.ContentFileInfo{Mode: 0o755}}}
	for _, c := range docs {
		if c.Packager == "" || c.Packager == kind {
			cc, fi := *c, *c.FileInfo // nfpm fills in FileInfo: one per package
			cc.FileInfo = &fi
			contents = append(contents, &cc)
		}
	}
	info := nfpm.WithDefaults(&nfpm.Info{
		Name:        "fleetwatch",
		Arch:        t.arch,
		Platform:    "linux",
		Version:     st.pkgVersion,
		Section:     "devel",
		Priority:    "optional",
		Maintainer:  "fleetwatch maintainers",
		Description: description,
		MTime:       st.date,
		Overridables: nfpm.Overridables{
			Depends:  depends[kind],
			Contents: contents,
		},
	})
	pkger, err := nfpm.Get(kind)
	if err != nil {
		return "", err
	}
	name := filepath.Join(out, pkger.ConventionalFileName(info))
	f, err := os.Create(name)
	if err != nil {
		return "", err
	}
	err = pkger.Package(info, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("%s for %s: %v", kind, t, err)
	}
	return name, nil
}
