package workers

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"

	"github.com/fleetwatch/fleetwatch/internal/testkit"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

// A block: the agent's port first, stable across runs, never shared, and
// ports.json's "ports" map keeps its format (agent id to first port).
func TestAssignPortsBlock(t *testing.T) {
	dir := testkit.Repo(t)
	r := freeRange(t, 12)
	a, err := look.AssignPorts(dir, "a", r, 3)
	if err != nil || !reflect.DeepEqual(a, []int{r.Lo, r.Lo + 1, r.Lo + 2}) {
		t.Fatalf("a: %v %v", a, err)
	}
	// A plain AssignPort of another agent never takes a's block ports.
	if p, err := look.AssignPort(dir, "b", r); err != nil || p != r.Lo+3 {
		t.Fatalf("b: %d %v", p, err)
	}
	again, err := look.AssignPorts(dir, "a", r, 3)
	if err != nil || !reflect.DeepEqual(again, a) {
		t.Fatalf("a again: %v %v, want %v", again, err, a)
	}
	b, err := look.AssignPorts(dir, "b", r, 2)
	if err != nil || !reflect.DeepEqual(b, []int{r.Lo + 3, r.Lo + 4}) {
		t.Fatalf("b's block: %v %v", b, err)
	}
	// One of a's ports in use (its own backend, say) stays a's.
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(r.Lo+2))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, err := look.AssignPorts(dir, "a", r, 3); err != nil || !reflect.DeepEqual(got, a) {
		t.Fatalf("a while its port listens: %v %v", got, err)
	}
	// A bigger block keeps what it had and adds free ports past the others'.
	if got, err := look.AssignPorts(dir, "a", r, 4); err != nil || !reflect.DeepEqual(got, append(a, r.Lo+5)) {
		t.Fatalf("a's block grown: %v %v", got, err)
	}

	var file struct {
		Ports map[string]int
		Extra map[string][]int
	}
	data, err := os.ReadFile(filepath.Join(dir, look.PortsFile))
	if err != nil || json.Unmarshal(data, &file) != nil {
		t.Fatalf("ports.json: %s %v", data, err)
	}
	if !reflect.DeepEqual(file.Ports, map[string]int{"a": r.Lo, "b": r.Lo + 3}) {
		t.Errorf("ports map %v", file.Ports)
	}
	if !reflect.DeepEqual(file.Extra["a"], []int{r.Lo + 1, r.Lo + 2, r.Lo + 5}) {
		t.Errorf("a's extra ports %v", file.Extra)
	}

	// Releasing a's port releases its block: c gets the lowest ports.
	if err := look.ReleasePort(dir, "a", r.Lo); err != nil {
		t.Fatal(err)
	}
	c, err := look.AssignPorts(dir, "c", r, 2)
	if err != nil || !reflect.DeepEqual(c, []int{r.Lo, r.Lo + 1}) {
		t.Fatalf("c after a left: %v %v", c, err)
	}
	if _, err := look.AssignPorts(dir, "d", r, 12); err == nil {
		t.Fatal("a block larger than what is left: no error")
	}
}

func TestAssignPortsConcurrent(t *testing.T) {
	dir := testkit.Repo(t)
	r := freeRange(t, 30)
	blocks := make([][]int, 8)
	errs := make([]error, len(blocks))
	var wg sync.WaitGroup
	for i := range blocks {
		wg.Go(func() { blocks[i], errs[i] = look.AssignPorts(dir, "c-"+strconv.Itoa(i), r, 3) })
	}
	wg.Wait()
	seen := map[int]int{}
	for i, b := range blocks {
		if errs[i] != nil || len(b) != 3 {
			t.Fatalf("agent %d: %v %v", i, b, errs[i])
		}
		for _, p := range b {
			if other, dup := seen[p]; dup {
				t.Fatalf("agents %d and %d share port %d (%v)", other, i, p, blocks)
			}
			seen[p] = i
		}
	}
}
