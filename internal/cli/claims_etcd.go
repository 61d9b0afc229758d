//go:build etcd

package cli

import _ "fleetwatch/claims/etcdclaims" // registers the etcd backend
