package gitclaims

import (
	"context"
	"strings"
	"testing"
)

// An endpoint's record written on one clone is read on another, replaced,
// and removed; a record too big is refused.
func TestEndpointRecordsTravel(t *testing.T) {
	t.Parallel()
	bare := remoteWith(t, readyPlans(1))
	a, _ := cloneOf(t, bare)
	b, _ := cloneOf(t, bare)
	ctx := context.Background()
	if got, err := b.EndpointRecord(ctx, "cc one"); got != nil || err != nil {
		t.Fatalf("no record yet: %q %v", got, err)
	}
	for _, rec := range []string{`{"state":"shut"}`, `{"state":"backing-off"}`} {
		if err := a.PublishEndpoint(ctx, "cc one", []byte(rec)); err != nil {
			t.Fatal(err)
		}
		if got, err := b.EndpointRecord(ctx, "cc one"); string(got) != rec || err != nil {
			t.Errorf("read %q %v, want %q", got, err, rec)
		}
	}
	if out := gitIn(t, bare, "for-each-ref", "--format=%(objecttype) %(refname)", EndpointRefs); out != "blob "+EndpointRef("cc one") {
		t.Errorf("the remote holds %q", out)
	}
	if err := b.PublishEndpoint(ctx, "cc one", nil); err != nil {
		t.Fatal(err)
	}
	if got, err := a.EndpointRecord(ctx, "cc one"); got != nil || err != nil {
		t.Errorf("after removal: %q %v", got, err)
	}
	if err := a.PublishEndpoint(ctx, "x", []byte(strings.Repeat("x", 5000))); err == nil {
		t.Error("a record over the bound was published")
	}
}
