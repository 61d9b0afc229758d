// Package cli is fleetwatch's command line: one cobra command per verb,
// parsing command lines and turning the engine's answers into output and
// exit codes; the rules live in model, the disk in planfs. main.go only
// calls Main.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitNothing = 1
	exitError   = 2
)

// Main runs the command line args (without the program name) and returns
// the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if code, ok := gocacheProg(args); ok {
		return code
	}
	return run(args, stdout, stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	args = longDashes(root, args)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := unknownSubcommand(root, args)
	if err == nil {
		err = root.Execute()
	}
	var code exitCode
	var fe flagError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &fe):
		return fail(stderr, exitError, "%s", fe.Error())
	}
	return fail(stderr, exitError, "%v", err)
}

// exitCode is a command's result once it has said what it had to: the
// command printed its own lines, Main only exits with it.
type exitCode int

func (c exitCode) Error() string { return "exit " + strconv.Itoa(int(c)) }

func codeErr(code int) error {
	if code == exitOK {
		return nil
	}
	return exitCode(code)
}

// body is a command's work once its flags are parsed: the positional
// arguments in, an exit code out.
type body func(pos []string, stdout, stderr io.Writer) int

// leaf builds a command: setup registers its flags and returns its body.
func leaf(use, short string, setup func(fs *pflag.FlagSet) body) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ArbitraryArgs}
	run := setup(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return codeErr(run(args, cmd.OutOrStdout(), cmd.ErrOrStderr()))
	}
	return cmd
}

// group builds a command of subcommands (watch, worktree, skill). Alone it
// prints its usage, on stdout when usageOut, else on stderr, and exits 2.
func group(use, short, long string, usageOut bool, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Args: cobra.ArbitraryArgs}
	cmd.AddCommand(subs...)
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			w := c.ErrOrStderr()
			if usageOut {
				w = c.OutOrStdout()
			}
			fmt.Fprint(w, helpText(c))
			return exitCode(exitError)
		}
		if args[0] == "help" {
			fmt.Fprint(c.OutOrStdout(), helpText(c))
			return nil
		}
		return unknownSub(c, args[0])
	}
	return cmd
}

func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func helpText(c *cobra.Command) string {
	var b strings.Builder
	c.SetOut(&b)
	c.HelpFunc()(c, nil)
	c.SetOut(nil)
	return b.String()
}

func init() {
	cobra.EnableCommandSorting = false // the groups list commands in usage order
}

func newRoot() *cobra.Command {
	root := uiCmd()
	root.Version = version()
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.SetVersionTemplate("fleetwatch {{.Version}}\n")
	root.SetUsageTemplate(usageTemplate)
	root.SetHelpTemplate(helpTemplate)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return flagError{c, err} })
	root.CompletionOptions.HiddenDefaultCmd = false
	root.AddGroup(&cobra.Group{ID: "look", Title: "Look:"}, &cobra.Group{ID: "workers", Title: "Workers:"},
		&cobra.Group{ID: "operators", Title: "Operators:"}, &cobra.Group{ID: "landing", Title: "Landing:"},
		&cobra.Group{ID: "coordinator", Title: "Coordinator:"}, &cobra.Group{ID: "watchers", Title: "Watchers:"})
	add := func(id string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = id
			root.AddCommand(c)
		}
	}
	add("look", demoCmd(), boardCmd(), serveCmd(), usageCmd(), reportCmd())
	add("workers", workOnceCmd(), workerCmd(), tellCmd(), interruptCmd(), answerCmd(), askCmd(), worktreeCmd(), agentsCmd())
	add("operators", budgetCmd(), endpointsCmd(), newCmd(), promoteCmd(), parkCmd(), returnCmd(), releaseCmd(), recoverCmd(), completeCmd(),
		scaffoldCmd(), doctorCmd(), checkCmd(), repairCmd(), orchestratorCmd())
	add("landing", reviewCmd(), queueCmd())
	add("coordinator", inboxCmd(), approveCmd(), rejectCmd())
	add("watchers", watchCmd(), notifyCmd(), skillCmd())
	agent := demoAgentCmd()
	agent.Hidden = true
	root.AddCommand(agent)
	root.AddCommand(superviseCmd())
	root.SetHelpCommand(helpCmd(root))
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	describe(root)
	return root
}

// unknownSubcommand refuses `completion tcsh`: cobra would print the usage
// of a command that only holds subcommands and exit 0.
func unknownSubcommand(root *cobra.Command, args []string) error {
	cmd, rest, err := root.Find(args)
	if err != nil || cmd.Runnable() {
		return nil
	}
	for _, a := range rest {
		if !strings.HasPrefix(a, "-") {
			return unknownSub(cmd, a)
		}
	}
	return nil
}

// usageHead is the usage line; usageTail the commands and the flags.
const usageHead = `usage: {{.UseLine}}{{if .HasAvailableSubCommands}}
       {{.CommandPath}} <command> [flags]{{end}}`

const usageTemplate = usageHead + usageTail

const usageTail = `{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{if eq (len .Groups) 0}}

Commands:{{range $cmds}}{{if .IsAvailableCommand}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{else}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) .IsAvailableCommand)}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}

More:{{range $cmds}}{{if (and (eq .GroupID "") (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableSubCommands}}

Run '{{.CommandPath}} <command> -h' for a command's flags.{{end}}
`

// helpTemplate is -h and help COMMAND: the usage line, what the command
// does and examples of it, then its commands and flags.
const helpTemplate = usageHead + `{{with .Long}}

{{. | trimTrailingWhitespaces}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}` + usageTail

// flagError is a flag the command did not understand; it prints as one
// line naming the flag and the command's -h, in the words Go's flag
// package used (scripts and anchor's users read them).
type flagError struct {
	cmd *cobra.Command
	err error
}

func (e flagError) Error() string {
	msg := e.err.Error()
	var ne *pflag.NotExistError
	var ve *pflag.ValueRequiredError
	var ie *pflag.InvalidValueError
	switch {
	case errors.As(e.err, &ne):
		name := ne.GetSpecifiedName()
		if s := ne.GetSpecifiedShortnames(); s != "" {
			name = s
		}
		msg = "flag provided but not defined: -" + name
		if len(name) > 1 {
			msg += flagHint(e.cmd, name)
		}
	case errors.As(e.err, &ve):
		msg = "flag needs an argument: -" + ve.GetSpecifiedName()
	case errors.As(e.err, &ie):
		cause := ie.Unwrap()
		var ne *strconv.NumError
		if errors.As(cause, &ne) {
			cause = errors.New("parse error")
			if errors.Is(ne.Err, strconv.ErrRange) {
				cause = errors.New("value out of range")
			}
		}
		msg = fmt.Sprintf("invalid value %q for flag -%s: %v", ie.GetValue(), ie.GetFlag().Name, cause)
	}
	path := e.cmd.CommandPath()
	if name := strings.TrimPrefix(path, "fleetwatch "); name != path {
		return fmt.Sprintf("%s: %s (run '%s -h')", name, msg, path)
	}
	return fmt.Sprintf("%s (run '%s -h')", msg, path)
}

// longDashes turns the single-dash long flags Go's flag package took
// (-once, -root=DIR) into pflag's --once, --root=DIR, for the flags the
// command has; a flag's value is left alone even when it starts with a dash.
func longDashes(root *cobra.Command, args []string) []string {
	cmd, i := commandOf(root, args)
	cmd.InitDefaultHelpFlag()
	if cmd == root {
		root.InitDefaultVersionFlag()
	}
	out := append([]string(nil), args...)
	for ; i < len(out) && out[i] != "--"; i++ {
		a := out[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := cmd.Flags().Lookup(name)
		if f == nil {
			continue
		}
		if !strings.HasPrefix(a, "--") && len(name) > 1 {
			out[i] = "-" + a
		}
		if !hasValue && f.NoOptDefVal == "" {
			i++ // the next word is its value
		}
	}
	return out
}

// commandOf is the command args name from root by their leading words,
// and the index of the first word past them.
func commandOf(root *cobra.Command, args []string) (*cobra.Command, int) {
	cmd := root
	i := 0
	for ; i < len(args) && !strings.HasPrefix(args[i], "-"); i++ {
		next := child(cmd, args[i])
		if next == nil {
			break
		}
		cmd = next
	}
	return cmd, i
}

func child(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}
