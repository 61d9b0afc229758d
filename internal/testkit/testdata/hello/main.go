// Command hello is the program BuildProgram's test builds.
package main

import "fmt"

func main() { fmt.Println("hello") }
