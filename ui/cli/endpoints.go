package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetwatch/fleetwatch/planfs/claims"
	"github.com/fleetwatch/fleetwatch/workers/look"
)

const endpointsLong = `Endpoints in trouble, as their last runs left them: backing off after a rate
limit or an overload, disabled after a refused key or login, shut until a
spent usage window's reset. No worker claims for one until its time has
passed (a disabled one until it is cleared); the next tick after that claims
again by itself.`

func endpointsCmd() *cobra.Command {
	cmd := group("endpoints", "endpoints backing off, disabled or shut; clear one", endpointsLong, true, endpointsShowCmd(), endpointsClearCmd())
	cmd.Example = "  fleetwatch endpoints show\n  fleetwatch endpoints clear claude-opus"
	return cmd
}

func endpointsShowCmd() *cobra.Command {
	cmd := leaf("show", "each endpoint in trouble: state, until when, why", func(fs *pflag.FlagSet) body {
		var root string
		rootFlag(fs, &root, rootHelp)
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) > 0 {
				return fail(stderr, exitError, "endpoints show takes no arguments")
			}
			printTroubles(stdout, look.ReadEndpoints(findRoot(root)), time.Now())
			return exitOK
		}
	})
	cmd.Long = "Each endpoint in trouble, one line each: its name, state (backing-off, disabled,\nshut), until when, and why."
	cmd.Example = "  fleetwatch endpoints show"
	return cmd
}

// printTroubles writes one line per endpoint in trouble.
func printTroubles(w io.Writer, states []look.EndpointState, now time.Time) {
	if len(states) == 0 {
		fmt.Fprintln(w, "no endpoint in trouble")
		return
	}
	for _, st := range states {
		until := "until cleared"
		switch {
		case st.State == look.EndpointDisabled:
		case now.Before(st.Until):
			until = "until " + st.Until.UTC().Format(time.RFC3339)
		default:
			until = "open again since " + st.Until.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", st.Name, st.State, until, st.Reason)
	}
}

func endpointsClearCmd() *cobra.Command {
	cmd := leaf("clear NAME", "forget an endpoint's trouble (a fixed key): its workers claim again", func(fs *pflag.FlagSet) body {
		var root string
		rootFlag(fs, &root, rootHelp)
		return func(pos []string, stdout, stderr io.Writer) int {
			if len(pos) != 1 {
				return fail(stderr, exitError, "endpoints clear takes one endpoint name")
			}
			project := findRoot(root)
			b, err := openClaims(project, "")
			if err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			var board claims.EndpointBoard // none for the local lease files
			if b != nil {
				defer b.Close()
				board, _ = b.(claims.EndpointBoard)
			}
			if err := look.ResetEndpoint(project, pos[0], board); err != nil {
				return fail(stderr, exitError, "%v", err)
			}
			fmt.Fprintf(stdout, "%s: cleared\n", pos[0])
			return exitOK
		}
	})
	cmd.Long = "Forgets an endpoint's trouble, here and in the remote claims backend, as a run\nthat ends well on it does: its workers claim again at their next tick. For a disabled endpoint, once its key is fixed."
	cmd.Example = "  fleetwatch endpoints clear claude-opus"
	return cmd
}
