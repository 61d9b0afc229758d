// Command caller stands in for an agent that talks to its model through
// the driver's metering proxy: it POSTs each body given to
// $FLEET_BASE_URL + PATH, reads each answer to its end, and prints a
// ## Result.
//
//	caller PATH BODY...
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: caller PATH BODY...")
		os.Exit(2)
	}
	url := os.Getenv("FLEET_BASE_URL") + os.Args[1]
	for _, body := range os.Args[2:] {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			fmt.Fprintln(os.Stderr, "caller:", err)
			os.Exit(1)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			fmt.Fprintf(os.Stderr, "caller: %s: %s after %d bytes: %v\n", url, resp.Status, n, err)
			os.Exit(1)
		}
		fmt.Printf("%s: %s, %d bytes\n", url, resp.Status, n)
	}
	fmt.Print("## Result\n\nsuccess: called\n")
}
