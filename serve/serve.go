package serve

import (
	"context"
	"errors"
	"io"
)

// Options are `fleetwatch serve`'s flags.
type Options struct {
	Root           string // the project (its .plans/ is found below it)
	Listen         string // host:port, e.g. 127.0.0.1:2222
	AuthorizedKeys string // operators' keys, OpenSSH authorized_keys format
	Viewers        string // viewers' keys, same format; "" for none
	HostKey        string // "" means var/fleet/serve/host_ed25519, made once
	Self           string // the fleetwatch binary spawned workers run
	Log            io.Writer
	// Ready, when set, is called with the address listened on once the
	// server accepts connections (tests listen on port 0).
	Ready func(addr string)
}

// Run serves until ctx ends (SIGTERM, SIGINT), then tells every session,
// closes them and the listener, and returns nil.
func Run(ctx context.Context, opt Options) error {
	return errors.New("not yet") // TODO(serve helper)
}
