// Command kstatus prints what the real kstatus library (the one Flux, kpt and cli-utils use)
// makes of each object in a Kubernetes List read as JSON, e.g.
//
//	kubectl get dt -o json | go -C tools/kstatus run .    (from the repository root)
//	go -C tools/kstatus run . "$PWD/tasks.json"
//
// One line per object: "<namespace>/<name> <status> <message>", the status being one of
// kstatus's InProgress, Failed, Current, Terminating, NotFound, Unknown. The Java test
// it/KstatusIT runs it against DelayedTasks in every phase, taken from a real API server.
package main

import (
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

func main() {
	in := io.Reader(os.Stdin)
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fail(err)
		}
		defer f.Close()
		in = f
	}
	// A List as kubectl prints it: {"kind":"List","items":[{...},{...}]}. apimachinery's json
	// reads whole numbers as int64 (encoding/json would give float64), as unstructured expects.
	data, err := io.ReadAll(in)
	if err != nil {
		fail(err)
	}
	var list struct {
		Items []map[string]interface{} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		fail(fmt.Errorf("reading a JSON List: %w", err))
	}
	for _, item := range list.Items {
		obj := &unstructured.Unstructured{Object: item}
		// Compute reads the standard conditions (Ready, Reconciling, Stalled) and
		// observedGeneration the way Flux's health checks do.
		result, err := status.Compute(obj)
		if err != nil {
			fail(fmt.Errorf("%s/%s: %w", obj.GetNamespace(), obj.GetName(), err))
		}
		fmt.Printf("%s/%s %s %s\n", obj.GetNamespace(), obj.GetName(), result.Status, result.Message)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "kstatus:", err)
	os.Exit(1)
}
