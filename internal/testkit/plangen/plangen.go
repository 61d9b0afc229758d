// Package plangen writes large, realistic .plans/ trees for fleetwatch's benchmarks: a busy project's lane mix, headers, dependencies and leases.
//
// Plan i's lane, name, text, mtime and lease depend only on i, n and the
// clock passed in, so every benchmark, on disk or in memory, sees the same
// project.
package plangen

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

// Sizes are the tree sizes the benchmarks compare: ns/plan flat from 10k
// to 100k means no quadratic step.
var Sizes = []struct {
	Name string
	N    int
}{{"1k", 1_000}, {"10k", 10_000}, {"100k", 100_000}}

// plansDir is planfs.Dir; plangen cannot import planfs, whose own tests
// import plangen.
const plansDir = ".plans"

// Lane spreads plans like a busy tree: 40% features, 15% bugs, 10%
// drafts, 25% completed, 5% in progress, the rest parked or in review.
func Lane(i int) model.Lane {
	switch h := hash(i) % 1000; {
	case h < 400:
		return model.Features
	case h < 550:
		return model.Bugs
	case h < 650:
		return model.Drafts
	case h < 900:
		return model.Completed
	case h < 950:
		return model.InProgress
	case h < 970:
		return model.Ambiguous
	case h < 985:
		return model.Blocked
	}
	return model.ReviewNeeded
}

func hash(i int) uint64 { // splitmix64
	z := uint64(i)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e5d
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

var words = strings.Fields(`login timeout cache index sync export report retry queue
	parser budget search upload billing webhook session token schema migrate render
	layout metrics alert audit backup restore refund invoice profile avatar quota
	throttle archive import deploy rollback feature flag locale theme sidebar`)

// Slug is plan i's slug: two words and i, so slugs are unique.
func Slug(i int) string {
	h := hash(i)
	return fmt.Sprintf("%s-%s-%d", words[h>>20%uint64(len(words))], words[h>>40%uint64(len(words))], i)
}

// File is plan i's file name: some completed plans carry a date
// prefix, a few ready ones are private.
func File(i int) string {
	h := hash(i) >> 50
	switch lane := Lane(i); {
	case lane == model.Completed && h%3 == 0:
		return fmt.Sprintf("2025-%02d-%02d-%s.md", 1+h%12, 1+h%28, Slug(i))
	case lane.Ready() && h%100 == 0:
		return Slug(i) + ".local.md"
	}
	return Slug(i) + ".md"
}

// ModTime is plan i's mtime: spread over the 90 days before now.
func ModTime(i int, now time.Time) time.Time {
	return now.Add(-time.Duration(hash(i)%(90*24*3600)) * time.Second)
}

// Lease is the lease an in-progress plan i holds at now: claimed ten
// minutes ago, one in ten already expired.
func Lease(i int, now time.Time) model.Lease {
	t := float64(now.Unix())
	exp := t + 3000
	if i%10 == 0 {
		exp = t - 60
	}
	return model.Lease{Plan: string(Lane(i)) + "/" + File(i), AgentID: fmt.Sprintf("worker-%d", i%8),
		ClaimedAt: t - 600, ExpiresAt: exp, Origin: "features/" + File(i)}
}

func pick(r *rand.Rand, from ...string) string { return from[r.IntN(len(from))] }

// Text is plan i of n: a real header, then 1–3 KB of body.
func Text(i, n int) string {
	r := rand.New(rand.NewPCG(uint64(i), 7))
	var b strings.Builder
	fmt.Fprintf(&b, "# Plan: %s\n\n", strings.ReplaceAll(Slug(i), "-", " "))
	fmt.Fprintf(&b, "- **Value:** %s\n", pick(r, "high", "medium", "medium", "low"))
	fmt.Fprintf(&b, "- **Priority:** %s\n", pick(r, "P1", "P2", "P2", "`P3`", "P1 — customer escalation"))
	if r.IntN(10) < 8 {
		fmt.Fprintf(&b, "- **Preferred models:** %s\n", pick(r, "small", "mid", "mid, reasoner",
			"reasoner, frontier", "frontier", "claude-sonnet-4.5, mid", "gpt-5-codex", "Qwen3 32B, small", "small, mid"))
	}
	if r.IntN(10) < 6 {
		fmt.Fprintf(&b, "- **Assignee:** %s\n", pick(r, "ai", "ai", "agent", "any", "-", "ai", "alice (design review)"))
	}
	var deps []string
	if r.IntN(100) < 35 {
		for range 1 + r.IntN(3) {
			switch x := r.IntN(100); {
			case x < 3:
				deps = append(deps, fmt.Sprintf("retired-plan-%d", r.IntN(50))) // in no lane
			case x < 60:
				j := r.IntN(n)
				for k := 0; k < n && Lane(j) != model.Completed; k++ {
					j = (j + 1) % n
				}
				deps = append(deps, Slug(j))
			default:
				deps = append(deps, Slug(r.IntN(n)))
			}
		}
	} else if r.IntN(4) == 0 {
		deps = []string{"none"}
	}
	section := len(deps) > 1 && r.IntN(5) == 0
	if len(deps) > 0 && !section {
		fmt.Fprintf(&b, "- **Depends on:** %s\n", strings.Join(deps, ", "))
	}
	b.WriteString("\n## Goal\n")
	size := 1024 + r.IntN(2048)
	for line := 0; b.Len() < size-200; line++ {
		if line%6 == 5 {
			b.WriteString("\n## Notes\n")
		}
		b.WriteString("- ")
		for range 8 + r.IntN(8) {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("\n")
	}
	if section {
		b.WriteString("\n## Depends on\n- " + strings.Join(deps, "\n- ") + "\n")
	}
	b.WriteString("\n## Done when\n- the tests pass\n- the operator signs off\n")
	return b.String()
}

// Write writes an n-plan project into dir: .plans/ with every lane and
// .leases/, plans with spread mtimes, and a lease for each in-progress plan.
// It ends with one sync(2), so the kernel's write-back of the new files
// does not land inside a measurement.
func Write(dir string, n int, now time.Time) error {
	plans := filepath.Join(dir, plansDir)
	for _, lane := range model.Lanes {
		if err := os.MkdirAll(filepath.Join(plans, string(lane)), 0o755); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(plans, ".leases"), 0o755); err != nil {
		return err
	}
	write := func(i int) error {
		lane, name := Lane(i), File(i)
		p := filepath.Join(plans, string(lane), name)
		if err := os.WriteFile(p, []byte(Text(i, n)), 0o644); err != nil {
			return err
		}
		mt := ModTime(i, now)
		if err := os.Chtimes(p, mt, mt); err != nil {
			return err
		}
		if lane != model.InProgress {
			return nil
		}
		l := Lease(i, now)
		return os.WriteFile(filepath.Join(plans, ".leases", model.LeaseFileName(l.Plan)), model.EncodeLease(l), 0o644)
	}
	const writers = 4
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n && errs[w] == nil; i += writers {
				errs[w] = write(i)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	syscall.Sync()
	return nil
}

// RawRead is the baseline: list every lane, then open, read the first
// 4 KiB of and close every plan file, one after another, parsing nothing.
func RawRead(plansDir string) (files int, err error) {
	buf := make([]byte, 4<<10)
	for _, lane := range model.Lanes {
		dir := filepath.Join(plansDir, string(lane))
		entries, err := os.ReadDir(dir)
		if err != nil {
			return files, err
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") || e.Name() == "README.md" {
				continue
			}
			f, err := os.Open(filepath.Join(dir, e.Name()))
			if err != nil {
				return files, err
			}
			if _, err := io.ReadFull(f, buf); err != nil && err != io.ErrUnexpectedEOF {
				f.Close()
				return files, err
			}
			f.Close()
			files++
		}
	}
	return files, nil
}

// RawBest times RawRead on the project dir: the best of at least two runs
// (up to five within a second), so a ratio against it errs on the strict
// side. Every run must read n files.
func RawBest(dir string, n int) (time.Duration, error) {
	best := time.Duration(1 << 62)
	for runs, start := 0, time.Now(); runs < 2 || runs < 5 && time.Since(start) < time.Second; runs++ {
		t0 := time.Now()
		got, err := RawRead(filepath.Join(dir, plansDir))
		if err != nil {
			return 0, err
		}
		if got != n {
			return 0, fmt.Errorf("read %d files, want %d", got, n)
		}
		best = min(best, time.Since(t0))
	}
	return best, nil
}

// Trees caches generated projects for one process: several benchmarks read
// the same tree, and writing 100k files takes seconds. The zero Trees is
// ready to use; Remove deletes what it made.
type Trees struct {
	// Pattern names the temporary root, as for os.MkdirTemp
	// (default "fleetwatch-bench-*").
	Pattern string

	mu   sync.Mutex
	root string
	now  time.Time // the generator's clock, shared by every tree
	dirs map[int]string
}

// Get returns the project dir of the cached n-plan tree. The first call for
// n writes it with Write, its clock the time of the first Get, then runs
// setup, if not nil, on the project dir, followed by another sync(2).
func (c *Trees) Get(n int, setup func(dir string) error) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.dirs[n]; ok {
		return d, nil
	}
	if c.root == "" {
		pattern := c.Pattern
		if pattern == "" {
			pattern = "fleetwatch-bench-*"
		}
		root, err := os.MkdirTemp("", pattern)
		if err != nil {
			return "", err
		}
		c.root, c.now, c.dirs = root, time.Now(), map[int]string{}
	}
	d := filepath.Join(c.root, strconv.Itoa(n))
	err := Write(d, n, c.now)
	if err == nil && setup != nil {
		err = setup(d)
		syscall.Sync()
	}
	if err != nil {
		os.RemoveAll(d)
		return "", err
	}
	c.dirs[n] = d
	return d, nil
}

// Remove deletes every tree Get made. Get may be called again afterwards.
func (c *Trees) Remove() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.root != "" {
		os.RemoveAll(c.root)
	}
	c.root, c.dirs = "", nil
}
