package planfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"fleetwatch/model"
)

// HeaderLimit is how much of a plan file is read for its header.
const HeaderLimit = 64 << 10

type cachedPlan struct {
	size    int64
	modTime int64
	header  model.Header
	warns   []model.Warning
}

type scanItem struct {
	lane model.Lane
	name string
	path string
	// regular is false for symlinks, which are resolved before reading.
	regular bool
	plan    model.Plan
	warns   []model.Warning
	ok      bool
}

// Scan reads the tree into a snapshot. Files unchanged in size and mtime
// since the last Scan of this Tree are not read again.
func (t *Tree) Scan() (*model.Snapshot, error) {
	if _, err := os.Stat(t.Plans); err != nil {
		return nil, err
	}
	snap := &model.Snapshot{}
	var items []*scanItem
	for _, lane := range model.Lanes {
		dir := filepath.Join(t.Plans, string(lane))
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			snap.Warnings = append(snap.Warnings, model.Warning{File: string(lane) + "/", Message: "lane is a symlink; skipped (plans must stay inside the tree)"})
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				snap.Warnings = append(snap.Warnings, model.Warning{File: string(lane) + "/", Message: "unreadable lane: " + errText(err)})
			}
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".md") || name == "README.md" {
				continue
			}
			rel := string(model.RelOf(lane, name))
			switch {
			case e.IsDir():
				snap.Warnings = append(snap.Warnings, model.Warning{File: rel, Message: "is a directory, not a plan; skipped"})
				continue
			case e.Type()&fs.ModeSymlink != 0:
			case !e.Type().IsRegular():
				snap.Warnings = append(snap.Warnings, model.Warning{File: rel, Message: "not a regular file; skipped"})
				continue
			}
			items = append(items, &scanItem{lane: lane, name: name, path: filepath.Join(dir, name), regular: e.Type().IsRegular()})
		}
	}
	t.readAll(items)
	fresh := make(map[string]cachedPlan, len(items))
	snap.Plans = make([]model.Plan, 0, len(items))
	for _, it := range items {
		snap.Warnings = append(snap.Warnings, it.warns...)
		if it.ok {
			snap.Plans = append(snap.Plans, it.plan)
			fresh[it.path] = cachedPlan{size: it.plan.Size, modTime: it.plan.ModTime, header: it.plan.Header, warns: it.warns}
		}
	}
	t.mu.Lock()
	t.cache = fresh
	t.mu.Unlock()
	snap.Leases, snap.Warnings = t.scanLeases(snap.Warnings)
	return snap, nil
}

// readAll reads items in parallel: at thousands of plans the time goes to
// syscalls, which overlap well.
func (t *Tree) readAll(items []*scanItem) {
	t.mu.Lock()
	cache := t.cache
	t.mu.Unlock()
	workers := min(runtime.GOMAXPROCS(0)*4, len(items)/64+1)
	var wg sync.WaitGroup
	next := make(chan *scanItem, 256)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, HeaderLimit)
			for it := range next {
				t.readItem(it, cache, buf)
			}
		}()
	}
	for _, it := range items {
		next <- it
	}
	close(next)
	wg.Wait()
}

func (t *Tree) readItem(it *scanItem, cache map[string]cachedPlan, buf []byte) {
	rel := string(it.lane) + "/" + it.name
	warn := func(msg string) { it.warns = append(it.warns, model.Warning{File: rel, Message: msg}) }
	if !it.regular {
		real, err := filepath.EvalSymlinks(it.path)
		if err != nil {
			warn("broken symlink; skipped")
			return
		}
		plansReal, _ := filepath.EvalSymlinks(t.Plans)
		if r, err := filepath.Rel(plansReal, real); err != nil || r == ".." || strings.HasPrefix(r, "../") {
			warn("symlink leaving the tree; skipped")
			return
		}
	}
	prev, cached := cache[it.path]
	if cached {
		fi, err := os.Stat(it.path)
		if err == nil && fi.Mode().IsRegular() && fi.Size() == prev.size && fi.ModTime().UnixNano() == prev.modTime {
			it.plan = newPlan(it.lane, it.name, prev.size, prev.modTime, prev.header)
			it.warns = prev.warns
			it.ok = true
			return
		}
	}
	f, err := os.Open(it.path)
	if errors.Is(err, fs.ErrNotExist) {
		return // moved by a worker since the lane was listed
	}
	if err != nil {
		warn("unreadable: " + errText(err))
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		warn("unreadable: " + errText(err))
		return
	}
	if !fi.Mode().IsRegular() {
		if fi.IsDir() {
			warn("is a directory, not a plan; skipped")
		} else {
			warn("not a regular file; skipped")
		}
		return
	}
	text, badUTF8, err := headerText(f, buf)
	if err != nil {
		warn(err.Error() + "; skipped")
		return
	}
	if fi.Size() > HeaderLimit {
		warn("larger than 64 KiB; only the first 64 KiB are read for the header")
	}
	if badUTF8 {
		warn("invalid UTF-8; read with replacement characters")
	}
	h := model.ParseHeader(text)
	for _, w := range h.Warnings {
		w.File = rel
		it.warns = append(it.warns, w)
	}
	it.plan = newPlan(it.lane, it.name, fi.Size(), fi.ModTime().UnixNano(), h)
	it.ok = true
}

func newPlan(lane model.Lane, name string, size, modTime int64, h model.Header) model.Plan {
	if h.Title == "" {
		h.Title = name
	}
	return model.Plan{
		Rel: string(model.RelOf(lane, name)), Lane: lane, Name: name, Slug: model.SlugOf(name),
		Local: strings.HasSuffix(name, ".local.md"), ModTime: modTime, Size: size, Header: h,
	}
}

// Leases reads every lease file without scanning the plans: who holds what
// (a corrupt lease has Corrupt set), and warnings about files that are not
// leases.
func (t *Tree) Leases() ([]model.Lease, []model.Warning) {
	return t.scanLeases(nil)
}

// scanLeases reads every lease file; unreadable ones become corrupt leases so
// they block picks and show up, rather than vanish.
func (t *Tree) scanLeases(warns []model.Warning) ([]model.Lease, []model.Warning) {
	dir := filepath.Join(t.Plans, ".leases")
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			warns = append(warns, model.Warning{File: ".leases/", Message: "unreadable: " + errText(err)})
		}
		return nil, warns
	}
	var leases []model.Lease
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || e.IsDir() {
			continue
		}
		rel, ok := model.RelOfLeaseFile(name)
		if !ok {
			warns = append(warns, model.Warning{File: ".leases/" + name, Message: "lease file name does not name a plan; ignored"})
			continue
		}
		l := t.readLeaseFile(filepath.Join(dir, name))
		l.File, l.Rel = name, rel
		leases = append(leases, l)
	}
	sort.Slice(leases, func(i, j int) bool { return leases[i].Rel < leases[j].Rel })
	return leases, warns
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	// A link's or rename's two paths can pass 500 bytes: the cause is enough.
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// errBinary is a plan file with NUL bytes in its header: not markdown.
var errBinary = errors.New("binary file (NUL bytes)")

// headerText reads up to HeaderLimit bytes of f into buf as text, invalid
// UTF-8 replaced (and reported).
func headerText(f *os.File, buf []byte) (text string, badUTF8 bool, err error) {
	n, err := io.ReadFull(f, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return "", false, fmt.Errorf("unreadable: %s", errText(err))
	}
	data := buf[:n]
	if bytes.IndexByte(data, 0) >= 0 {
		return "", false, errBinary
	}
	if !utf8.Valid(data) {
		return strings.ToValidUTF8(string(data), "\uFFFD"), true, nil
	}
	return string(data), false, nil
}
