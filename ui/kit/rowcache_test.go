package kit

import "testing"

// The cache keeps at most rowSetsKept sets, dropping the least recently
// used: old boards and old seconds do not stay.
func TestRowCacheBounded(t *testing.T) {
	c := NewRowCache()
	keep := c.Get(RowsKey{Width: -1}, 3)
	for i := range 3 * rowSetsKept {
		c.Get(RowsKey{Width: i}, 3)
		c.Get(RowsKey{Width: -1}, 3) // in use all along
	}
	if n := c.Len(); n > rowSetsKept {
		t.Fatalf("the cache keeps %d sets, more than %d", n, rowSetsKept)
	}
	if c.Get(RowsKey{Width: -1}, 3) != keep {
		t.Fatal("the set in use was dropped")
	}
}
