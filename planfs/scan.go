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
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fleetwatch/fleetwatch/model"
)

// HeaderLimit is how much of a plan file is read for its header.
const HeaderLimit = 64 << 10

type scanItem struct {
	lane model.Lane
	name string
	path string
	// regular is false for symlinks, which are resolved before reading.
	regular bool
	// listWarn is why the listing skipped the entry (a directory, not a
	// regular file); such an item is never read.
	listWarn string
	plan     model.Plan
	warns    []model.Warning
	ok       bool
}

// laneScan is one lane as the last scan saw it.
type laneScan struct {
	warn  *model.Warning // the lane is a symlink or unreadable
	items []*scanItem    // by name, as os.ReadDir lists them
}

// leaseItem is one file in .leases/ as the last scan saw it.
type leaseItem struct {
	name  string
	warn  *model.Warning // the name does not name a plan
	lease model.Lease
}

// scanBase is everything the last scan read, so that Rescan can change only
// what the watcher saw change and Scan can skip unchanged files.
type scanBase struct {
	lanes     []laneScan // model.Lanes order
	leaseWarn *model.Warning
	leases    []*leaseItem // by name
	at        time.Time    // when the last full scan began
}

// Scan reads the tree into a snapshot. Files unchanged in size and mtime
// since the last scan of this Tree are not read again.
func (t *Tree) Scan() (*model.Snapshot, error) {
	t.scanMu.Lock()
	defer t.scanMu.Unlock()
	return t.fullScan()
}

// fullScan is Scan with scanMu held.
func (t *Tree) fullScan() (*model.Snapshot, error) {
	// Everything the watcher saw until now is read below.
	t.takeDirty()
	start := time.Now()
	if _, err := os.Stat(t.Plans); err != nil {
		return nil, err
	}
	old := t.base
	base := &scanBase{lanes: make([]laneScan, len(model.Lanes)), at: start}
	var items []*scanItem
	for i, lane := range model.Lanes {
		base.lanes[i] = t.listLane(lane)
		for _, it := range base.lanes[i].items {
			if it.listWarn == "" {
				items = append(items, it)
			}
		}
	}
	t.readAll(items, old)
	base.leaseWarn, base.leases = t.listLeases()
	t.base = base
	return base.snapshot(), nil
}

// listLane lists one lane's plan files, unread.
func (t *Tree) listLane(lane model.Lane) laneScan {
	var ls laneScan
	dir := filepath.Join(t.Plans, string(lane))
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		ls.warn = &model.Warning{File: string(lane) + "/", Message: "lane is a symlink; skipped (plans must stay inside the tree)"}
		return ls
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			ls.warn = &model.Warning{File: string(lane) + "/", Message: "unreadable lane: " + errText(err)}
		}
		return ls
	}
	ls.items = make([]*scanItem, 0, len(entries))
	for _, e := range entries {
		if it := newScanItem(lane, dir, e.Name(), e.Type()); it != nil {
			ls.items = append(ls.items, it)
		}
	}
	return ls
}

// newScanItem is the entry name of type typ in a lane's dir, or nil when it
// is no plan file.
func newScanItem(lane model.Lane, dir, name string, typ fs.FileMode) *scanItem {
	if !strings.HasSuffix(name, ".md") || name == "README.md" {
		return nil
	}
	it := &scanItem{lane: lane, name: name, path: filepath.Join(dir, name), regular: typ.IsRegular()}
	switch {
	case typ.IsDir():
		it.listWarn = "is a directory, not a plan; skipped"
	case typ&fs.ModeSymlink != 0:
	case !typ.IsRegular():
		it.listWarn = "not a regular file; skipped"
	}
	return it
}

// snapshot assembles the snapshot the scan base describes, in the order a
// listing of the tree gives: lanes in order, files by name.
func (b *scanBase) snapshot() *model.Snapshot {
	snap := &model.Snapshot{}
	n := 0
	for _, ls := range b.lanes {
		if ls.warn != nil {
			snap.Warnings = append(snap.Warnings, *ls.warn)
		}
		for _, it := range ls.items {
			if it.listWarn != "" {
				snap.Warnings = append(snap.Warnings, model.Warning{File: string(model.RelOf(it.lane, it.name)), Message: it.listWarn})
			} else if it.ok {
				n++
			}
		}
	}
	snap.Plans = make([]model.Plan, 0, n)
	for _, ls := range b.lanes {
		for _, it := range ls.items {
			if it.listWarn != "" {
				continue
			}
			snap.Warnings = append(snap.Warnings, it.warns...)
			if it.ok {
				snap.Plans = append(snap.Plans, it.plan)
			}
		}
	}
	snap.Leases, snap.Warnings = b.leaseList(snap.Warnings)
	return snap
}

// readAll reads items in parallel: at thousands of plans the time goes to
// syscalls, which overlap well. Items old read with the same size and mtime
// are taken from it.
func (t *Tree) readAll(items []*scanItem, old *scanBase) {
	workers := min(runtime.GOMAXPROCS(0)*4, len(items)/64+1)
	var wg sync.WaitGroup
	next := make(chan *scanItem, 256)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, HeaderLimit)
			for it := range next {
				t.readItem(it, old.find(it.lane, it.name), buf)
			}
		}()
	}
	for _, it := range items {
		next <- it
	}
	close(next)
	wg.Wait()
}

// find returns the item the base holds for a lane's file, or nil.
func (b *scanBase) find(lane model.Lane, name string) *scanItem {
	if b == nil {
		return nil
	}
	ls := &b.lanes[laneIndex(lane)]
	i, ok := slices.BinarySearchFunc(ls.items, name, func(it *scanItem, name string) int { return strings.Compare(it.name, name) })
	if !ok {
		return nil
	}
	return ls.items[i]
}

func laneIndex(lane model.Lane) int {
	for i, l := range model.Lanes {
		if l == lane {
			return i
		}
	}
	return -1
}

// readItem reads one plan file; prev, when set and the same size and
// mtime, is taken instead.
func (t *Tree) readItem(it *scanItem, prev *scanItem, buf []byte) {
	rel := string(it.lane) + "/" + it.name
	warn := func(msg string) { it.warns = append(it.warns, model.Warning{File: rel, Message: msg}) }
	if !it.regular {
		if why := t.symlinkProblem(it.path); why != "" {
			warn(why)
			return
		}
	}
	if unchanged(it.path, prev) {
		it.plan, it.warns, it.ok = prev.plan, prev.warns, true
		return
	}
	f, fi, why := openPlanFile(it.path)
	if f == nil {
		if why != "" {
			warn(why)
		}
		return
	}
	defer f.Close()
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
	h := detach(model.ParseHeader(text))
	for _, w := range h.Warnings {
		w.File = rel
		it.warns = append(it.warns, w)
	}
	it.plan = newPlan(it.lane, it.name, fi.Size(), fi.ModTime().UnixNano(), h)
	it.ok = true
}

// symlinkProblem says why the symlink at path is no plan to read: broken,
// or leaving the tree; "" when it points at a file inside.
func (t *Tree) symlinkProblem(path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "broken symlink; skipped"
	}
	plansReal, _ := filepath.EvalSymlinks(t.Plans)
	if r, err := filepath.Rel(plansReal, real); err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "symlink leaving the tree; skipped"
	}
	return ""
}

// unchanged reports whether the file at path is still the one prev read:
// a regular file of the same size and mtime.
func unchanged(path string, prev *scanItem) bool {
	if prev == nil || !prev.ok {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() == prev.plan.Size && fi.ModTime().UnixNano() == prev.plan.ModTime
}

// openPlanFile opens the regular file at path, or says why not (nothing
// when a worker moved it since its lane was listed).
func openPlanFile(path string) (*os.File, fs.FileInfo, string) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, "" // moved by a worker since the lane was listed
	}
	if err != nil {
		return nil, nil, "unreadable: " + errText(err)
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return nil, nil, "unreadable: " + errText(err)
	case fi.IsDir():
		f.Close()
		return nil, nil, "is a directory, not a plan; skipped"
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, nil, "not a regular file; skipped"
	}
	return f, fi, ""
}

// detach copies a header's strings out of the file text they slice: a
// header lives as long as the UI runs, and pinning each file's whole text
// with it was most of the UI's memory at 10,000 plans.
func detach(h model.Header) model.Header {
	h.Title, h.Value, h.Priority = strings.Clone(h.Title), word(h.Value), word(h.Priority)
	h.PreferredRaw, h.Assignee, h.AssigneeRaw = strings.Clone(h.PreferredRaw), strings.Clone(h.Assignee), strings.Clone(h.AssigneeRaw)
	h.Preferred, h.DependsOn = words(h.Preferred), words(h.DependsOn)
	if h.Warnings != nil {
		ws := make([]model.Warning, len(h.Warnings))
		for i, w := range h.Warnings {
			ws[i] = model.Warning{File: w.File, Line: w.Line, Message: strings.Clone(w.Message)}
		}
		h.Warnings = ws
	}
	return h
}

// commonWords are header words most plans share; one copy serves them all.
var commonWords = map[string]string{}

func init() {
	for _, w := range []string{"high", "medium", "low", "P1", "P2", "P3", "small", "mid", "reasoner", "frontier"} {
		commonWords[w] = w
	}
}

func word(s string) string {
	if c, ok := commonWords[s]; ok {
		return c
	}
	return strings.Clone(s)
}

func words(s []string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	for i, w := range s {
		out[i] = word(w)
	}
	return out
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
	b := &scanBase{}
	b.leaseWarn, b.leases = t.listLeases()
	return b.leaseList(nil)
}

// listLeases reads every lease file; unreadable ones become corrupt leases
// so they block picks and show up, rather than vanish.
func (t *Tree) listLeases() (*model.Warning, []*leaseItem) {
	dir := filepath.Join(t.Plans, ".leases")
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return &model.Warning{File: ".leases/", Message: "unreadable: " + errText(err)}, nil
		}
		return nil, nil
	}
	var items []*leaseItem
	for _, e := range entries {
		if it := t.readLeaseItem(dir, e.Name(), e.IsDir()); it != nil {
			items = append(items, it)
		}
	}
	return nil, items
}

// readLeaseItem reads one entry of .leases/; nil for what is no lease file
// at all (the protocol's own dot files, folders).
func (t *Tree) readLeaseItem(dir, name string, isDir bool) *leaseItem {
	if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") || isDir {
		return nil
	}
	rel, ok := model.RelOfLeaseFile(name)
	if !ok {
		return &leaseItem{name: name, warn: &model.Warning{File: ".leases/" + name, Message: "lease file name does not name a plan; ignored"}}
	}
	l := t.readLeaseFile(filepath.Join(dir, name))
	l.File, l.Rel = name, rel
	return &leaseItem{name: name, lease: l}
}

// leaseList is the base's leases by plan, its warnings added to warns.
func (b *scanBase) leaseList(warns []model.Warning) ([]model.Lease, []model.Warning) {
	if b.leaseWarn != nil {
		warns = append(warns, *b.leaseWarn)
	}
	var leases []model.Lease
	for _, it := range b.leases {
		if it.warn != nil {
			warns = append(warns, *it.warn)
		} else {
			leases = append(leases, it.lease)
		}
	}
	sort.SliceStable(leases, func(i, j int) bool { return leases[i].Rel < leases[j].Rel })
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
