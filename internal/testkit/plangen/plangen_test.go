package plangen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetwatch/fleetwatch/model"
)

func TestWrite(t *testing.T) {
	const n = 200
	dir := t.TempDir()
	now := time.Now()
	if err := Write(dir, n, now); err != nil {
		t.Fatal(err)
	}
	plans := filepath.Join(dir, plansDir)
	total, lanes, leased := 0, 0, 0
	for _, lane := range model.Lanes {
		entries, err := os.ReadDir(filepath.Join(plans, string(lane)))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 0 {
			lanes++
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".md") {
				t.Errorf("%s/%s: not a plan file", lane, e.Name())
				continue
			}
			total++
			if lane != model.InProgress {
				continue
			}
			rel := string(lane) + "/" + e.Name()
			data, err := os.ReadFile(filepath.Join(plans, ".leases", model.LeaseFileName(rel)))
			if err != nil {
				t.Errorf("in-progress plan without a lease: %v", err)
				continue
			}
			if l, err := model.DecodeLease(data); err != nil || l.Plan != rel {
				t.Errorf("lease of %s: %+v, %v", rel, l, err)
			}
			leased++
		}
	}
	if total != n || lanes < 4 || leased == 0 {
		t.Errorf("%d plan files in %d lanes, %d leased; want %d plans, several lanes, some leases", total, lanes, leased, n)
	}
	if got, err := RawRead(plans); got != n || err != nil {
		t.Errorf("RawRead = %d, %v; want %d", got, err, n)
	}
}

func TestTrees(t *testing.T) {
	var c Trees
	setups := 0
	setup := func(string) error { setups++; return nil }
	d1, err := c.Get(10, setup)
	if err != nil {
		t.Fatal(err)
	}
	if d2, err := c.Get(10, setup); d2 != d1 || err != nil || setups != 1 {
		t.Errorf("second Get = %q, %v after %d setups; want %q from the cache", d2, err, setups, d1)
	}
	c.Remove()
	if _, err := os.Stat(d1); !os.IsNotExist(err) {
		t.Errorf("after Remove: %v", err)
	}
}
