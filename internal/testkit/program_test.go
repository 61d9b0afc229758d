package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A second build of an unchanged program links nothing: both callers get
// a link of their own to the one cached file, and it runs.
func TestBuildProgramLinksOnce(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go to build with")
	}
	defer RemovePrograms()
	first, err := BuildProgram("./testdata/hello", "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := BuildProgram("./testdata/hello", "greeter")
	if err != nil {
		t.Fatal(err)
	}
	// A relink would have put a new file in the cache, which the second
	// link would be of; the first still holds the old one.
	a, errA := os.Stat(first)
	b, errB := os.Stat(second)
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		t.Errorf("the second build linked again: %s and %s are not one file (%v %v)", first, second, errA, errB)
	}
	if filepath.Dir(first) == filepath.Dir(second) || filepath.Base(second) != "greeter" {
		t.Errorf("builds at %s and %s: want two folders, the second binary named greeter", first, second)
	}
	for _, bin := range []string{first, second} {
		if out, err := exec.Command(bin).Output(); err != nil || string(out) != "hello\n" {
			t.Errorf("%s: %q %v", bin, out, err)
		}
	}
	RemovePrograms()
	if _, err := os.Stat(filepath.Dir(first)); !os.IsNotExist(err) {
		t.Errorf("RemovePrograms left %s: %v", filepath.Dir(first), err)
	}
}
