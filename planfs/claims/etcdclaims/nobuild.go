//go:build !etcd

package etcdclaims

import "github.com/fleetwatch/fleetwatch/planfs/claims"

// opener is nil without the etcd tag: claims.Open then says how to build it.
var opener claims.Opener
