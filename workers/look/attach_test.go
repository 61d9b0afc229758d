package look

import (
	"slices"
	"testing"
)

func TestAttachPatchesSaysWhenTheyDoNotLineUp(t *testing.T) {
	patch := []byte("diff --git a/x b/x\n@@ -1 +1 @@\n-a\n+b\n")
	two := []FileDiff{{Path: "x"}, {Path: "y"}}
	if attachPatches(two, patch, false) {
		t.Error("two files, one patch: aligned")
	}
	one := []FileDiff{{Path: "x"}, {Path: "big", Summary: "not shown"}}
	if !attachPatches(one, patch, false) || !slices.Equal(one[0].Lines, []string{"@@ -1 +1 @@", "-a", "+b"}) {
		t.Errorf("one file, one patch: %+v", one)
	}
}
