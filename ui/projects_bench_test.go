package ui

import (
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/fleetwatch/fleetwatch/internal/testkit/plangen"
	"github.com/fleetwatch/fleetwatch/model"
	"github.com/fleetwatch/fleetwatch/planfs"
	"github.com/fleetwatch/fleetwatch/ui/kit"
)

// The Projects overview over 10 projects of 1,000 plans each
// (testkit/plangen, each a git repository with its plans committed), a
// real program drawing to nowhere, every project with its real hub and
// watchers.
//
// BenchmarkProjectsFirstScreen: from nothing open to the overview drawn
// with every project's lanes, workers, spend and queue read
// (first-screen-ms). BenchmarkProjectsChange: a plan file moved (bugs/ to
// features/ and back) in one project, until the overview drawn after it
// counts it (change-ms, and the worst, max-change-ms); and the CPU the
// cockpit uses idle, every project's clock ticking (idle-cpu-ms/s).

const (
	benchProjects = 10
	benchPlans    = 1_000
)

// projectsProbe is the program's model in the benchmarks: after each
// message it draws the overview, as the renderer would, and tells the
// benchmark what it counts.
type projectsProbe struct {
	p     *Projects
	seen  *atomic.Pointer[[][]int] // each project's lane counts, as drawn
	ready *atomic.Bool             // every project's readings are in
}

func (q projectsProbe) Init() tea.Cmd { return q.p.Init() }
func (q projectsProbe) View() string  { return q.p.View() }
func (q projectsProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	next, cmd := q.p.Update(msg)
	*q.p = next.(Projects)
	_ = q.p.View()
	counts := make([][]int, len(q.p.list))
	ready := true
	for i := range q.p.list {
		e := &q.p.list[i]
		counts[i] = append([]int(nil), e.sum.counts...)
		m := e.m
		ready = ready && e.sum.loaded && m.notes.haveWorkers && m.merge.loaded && m.fleetRead
	}
	q.seen.Store(&counts)
	if ready {
		q.ready.Store(true)
	}
	return q, cmd
}

// benchProjectDirs writes the projects once per process.
func benchProjectDirs(b *testing.B) []string {
	b.Helper()
	root := b.TempDir()
	dirs := make([]string, benchProjects)
	for i := range dirs {
		dirs[i] = filepath.Join(root, "proj"+kit.Itoa(i))
		if err := plangen.Write(dirs[i], benchPlans, time.Now()); err != nil {
			b.Fatal(err)
		}
		p := &project{dir: dirs[i]}
		p.git(b, 0, "init", "-q", "-b", "main")
		p.git(b, 0, "add", "-A")
		p.git(b, 0, "-c", "user.name=b", "-c", "user.email=b@b.invalid", "commit", "-q", "-m", "plans")
	}
	return dirs
}

// openBenchProjects starts the program over dirs and returns it with its
// probe's readings; stop quits it and closes every hub.
func openBenchProjects(b *testing.B, dirs []string) (seen *atomic.Pointer[[][]int], ready *atomic.Bool, stop func()) {
	b.Helper()
	ps := make([]Project, len(dirs))
	for i, d := range dirs {
		t, err := planfs.Open(d)
		if err != nil {
			b.Fatal(err)
		}
		opt := (&project{tree: t}).options()
		opt.NoWatch = false
		ps[i] = Project{Name: filepath.Base(d), Root: d, Options: opt}
	}
	p := NewProjects(ps)
	seen, ready = &atomic.Pointer[[][]int]{}, &atomic.Bool{}
	prog := tea.NewProgram(projectsProbe{p: &p, seen: seen, ready: ready},
		tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithoutSignalHandler(), tea.WithFPS(frameRate))
	done := make(chan struct{})
	go func() {
		_, _ = prog.Run()
		close(done)
	}()
	prog.Send(tea.WindowSizeMsg{Width: 120, Height: 32})
	return seen, ready, func() {
		prog.Quit()
		<-done
		p.Close()
	}
}

func BenchmarkProjectsFirstScreen(b *testing.B) {
	dirs := benchProjectDirs(b)
	var total time.Duration
	for b.Loop() {
		start := time.Now()
		_, ready, stop := openBenchProjects(b, dirs)
		for !ready.Load() {
			if time.Since(start) > 30*time.Second {
				b.Fatal("the overview was not complete in 30 s")
			}
			time.Sleep(time.Millisecond)
		}
		total += time.Since(start)
		stop()
	}
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "first-screen-ms")
}

func BenchmarkProjectsChange(b *testing.B) {
	dirs := benchProjectDirs(b)
	seen, ready, stop := openBenchProjects(b, dirs)
	defer stop()
	for start := time.Now(); !ready.Load(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			b.Fatal("the overview was not complete in 30 s")
		}
	}
	time.Sleep(5 * Debounce) // the first readings are all out
	idle0, idleAt := cpuTime(), time.Now()
	time.Sleep(2 * time.Second) // every project's countdown ticks
	idle := float64(cpuTime()-idle0) / float64(time.Since(idleAt)) * 1e3
	const k = 3 // the project that changes
	slug := 0
	for plangen.Lane(slug) != model.Bugs {
		slug++
	}
	plans := filepath.Join(dirs[k], planfs.Dir)
	rels := [2]string{filepath.Join("bugs", plangen.File(slug)), filepath.Join("features", plangen.File(slug))}
	bugs := laneIndex(model.Bugs)
	before := (*seen.Load())[k][bugs]
	var total, worst time.Duration
	for i := 0; b.Loop(); i++ {
		from, to := rels[i%2], rels[(i+1)%2]
		want := before - 1 // out of bugs/ on even ops, back on odd ones
		if i%2 == 1 {
			want = before
		}
		start := time.Now()
		if err := os.Rename(filepath.Join(plans, from), filepath.Join(plans, to)); err != nil {
			b.Fatal(err)
		}
		for (*seen.Load())[k][bugs] != want {
			if time.Since(start) > 10*time.Second {
				b.Fatalf("the overview did not count the move in 10 s")
			}
			time.Sleep(500 * time.Microsecond)
		}
		took := time.Since(start)
		total, worst = total+took, max(worst, took)
		time.Sleep(2 * Debounce) // what else the change leads to
	}
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "change-ms")
	b.ReportMetric(float64(worst.Microseconds())/1e3, "max-change-ms")
	b.ReportMetric(idle, "idle-cpu-ms/s")
}
