// Command hostile is an agent that tries to stall its driver or spend the
// fleet's money with the files it is given: stalltest runs it under a real
// `work-once --run` driver. Its first argument names the attack; it says
// on stdout when the trap is set ("trap set").
package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "hostile: want an attack")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "fifo-proposal":
		// A plan turn's proposal made a FIFO: opening it for reading
		// waits for a writer that never comes.
		if os.Getenv("FLEET_MODE") == "plan" {
			fifo(os.Getenv("FLEET_PROPOSAL"))
		}
	case "fifo-proposal-stay":
		if os.Getenv("FLEET_MODE") == "plan" {
			fifo(os.Getenv("FLEET_PROPOSAL"))
		}
		time.Sleep(time.Minute)
	case "fifo-review":
		// A reviewer's verdict file made a FIFO; the verdict on stdout
		// looks honest.
		fifo(os.Getenv("FLEET_REVIEW"))
		fmt.Println("ACCEPT")
	case "fifo-usage":
		fifo(os.Getenv("FLEET_USAGE"))
		// Past a heartbeat or two, when the driver weighs the run.
		time.Sleep(2500 * time.Millisecond)
	case "report-huge":
		// One line, far past any budget.
		line := `{"input_tokens":1000000000000000000,"output_tokens":1000000000000000000,"cost_usd":1e308,"model":"fake-1"}` + "\n"
		f, err := os.OpenFile(os.Getenv("FLEET_USAGE"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "hostile:", err)
			os.Exit(1)
		}
		f.WriteString(line)
		f.Close()
		fmt.Println("trap set")
	default:
		fmt.Fprintln(os.Stderr, "hostile: unknown attack", os.Args[1])
		os.Exit(2)
	}
}

func fifo(p string) {
	if p == "" {
		fmt.Fprintln(os.Stderr, "hostile: no path to make a FIFO at")
		os.Exit(1)
	}
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "hostile: mkfifo:", err)
		os.Exit(1)
	}
	fmt.Println("trap set")
}
