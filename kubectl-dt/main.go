// Command kubectl-dt is the kubectl plugin of the delayed-task-operator: `kubectl dt list` shows
// DelayedTasks in due-time order with a countdown and why each one waits, `kubectl dt why NAME`
// explains one task, and `fire-now`, `suspend`, `resume`, `pause` and `resume-queue` act on tasks
// and queues with JSON merge patches. One static binary: copy it onto PATH as kubectl-dt.
package main

import (
	"errors"
	"fmt"
	"os"
)

// version is set at release time: go build -ldflags "-X main.version=v0.4.0".
var version = "dev"

func main() {
	if err := newRootCommand(os.Stdout, os.Stderr).Execute(); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "error: "+err.Error())
		}
		os.Exit(1)
	}
}
