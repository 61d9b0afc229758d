package overlap

import (
	"sync"
	"testing"
	"time"
)

const n = 5

func TestMain(m *testing.M) {
	Default(n)
	m.Run()
}

// arrived counts the tests that have reached the barrier; all is closed
// once n have.
var (
	mu      sync.Mutex
	arrived int
	all     = make(chan struct{})
)

// meet waits for n parallel tests to run at once: with -test.parallel
// below n (the go tool's default is GOMAXPROCS) it times out.
func meet(t *testing.T) {
	t.Parallel()
	mu.Lock()
	if arrived++; arrived == n {
		close(all)
	}
	mu.Unlock()
	select {
	case <-all:
	case <-time.After(10 * time.Second):
		t.Fatalf("fewer than %d parallel tests ran at once", n)
	}
}

func TestOne(t *testing.T)   { meet(t) }
func TestTwo(t *testing.T)   { meet(t) }
func TestThree(t *testing.T) { meet(t) }
func TestFour(t *testing.T)  { meet(t) }
func TestFive(t *testing.T)  { meet(t) }
