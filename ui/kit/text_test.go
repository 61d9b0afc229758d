package kit

import (
	"slices"
	"testing"
)

func TestNatCompareCountsLikePeople(t *testing.T) {
	t.Parallel()
	ids := []string{"ui-mid-10", "ui-mid-2", "mid-1", "ui-mid-02x", "ui-mid-2", "ui-mid-1", "ui-small-1", "a"}
	slices.SortFunc(ids, NatCompare)
	want := []string{"a", "mid-1", "ui-mid-1", "ui-mid-2", "ui-mid-2", "ui-mid-02x", "ui-mid-10", "ui-small-1"}
	if !slices.Equal(ids, want) {
		t.Errorf("got %q, want %q", ids, want)
	}
}
