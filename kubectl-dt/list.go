package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

type listOptions struct {
	*options
	allNamespaces bool
	queue         string
	phases        []string
	dueWithin     time.Duration
	output        string
	chunkSize     int64
	now           func() time.Time
}

func newListCommand(o *options) *cobra.Command {
	l := &listOptions{options: o, now: time.Now}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List DelayedTasks in due-time order, with a countdown and why each one waits",
		Long: `List DelayedTasks in due-time order (earliest first; tasks without a due time last).

Columns: NAME; DUE, a countdown to the due time ("in 4m12s"; "overdue 3s" for a task past its due
time that has not fired; "3m ago" for one that fired); PHASE; KIND, what firing does (job: creates a
Job, sink: delivers a CloudEvent, status: only records it); QUEUE (spec.queue); WAITING, why a task
that could fire does not: Suspended (spec.suspend), QueuePaused, RateLimited, ConcurrencyLimited,
QueueMissing (its queue's condition Queued), AdmissionPolicyMissing, NotAdmitted (its condition
Ready), Retrying (a sink delivery waiting for its next attempt). -o wide adds the due time, the Job
or URL, and the message. -o json|yaml prints the tasks as the API server sent them, as a List in
the same order.`,
		Example: `  kubectl dt list                        # this namespace's tasks, next due first
  kubectl dt list -A --due-within 1h     # what fires in the next hour, in every namespace
  kubectl dt list --queue emails --phase Scheduled
  kubectl dt list -o json | jq '.items[].metadata.name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return l.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.BoolVarP(&l.allNamespaces, "all-namespaces", "A", false, "list the tasks of every namespace")
	f.StringVar(&l.queue, "queue", "", "only tasks whose spec.queue names this DelayedTaskQueue")
	f.StringSliceVar(&l.phases, "phase", nil, "only tasks in these phases (comma-separated: Scheduled,Suspended,Running,Fired,Succeeded,Failed,Missed,Invalid)")
	f.DurationVar(&l.dueWithin, "due-within", 0, "only tasks that have not fired and are due within this duration from now (1h, 30m); overdue ones included")
	f.StringVarP(&l.output, "output", "o", "", "output format: wide, json or yaml")
	f.Int64Var(&l.chunkSize, "chunk-size", defaultChunk, "read the list in pages of this many tasks, as kubectl get does")
	return cmd
}

func (l *listOptions) run(ctx context.Context) error {
	switch l.output {
	case "", "wide", "json", "yaml":
	default:
		return fmt.Errorf("-o %q is not supported: use wide, json or yaml", l.output)
	}
	wanted := map[string]bool{}
	for _, p := range l.phases {
		for _, one := range strings.Split(p, ",") {
			if strings.TrimSpace(one) == "" {
				continue
			}
			c, err := canonicalPhase(strings.TrimSpace(one))
			if err != nil {
				return err
			}
			wanted[c] = true
		}
	}
	if l.dueWithin < 0 {
		return fmt.Errorf("--due-within %s is negative: give a duration from now, such as 1h or 30m", l.dueWithin)
	}
	if l.chunkSize <= 0 {
		return fmt.Errorf("--chunk-size %d: give a positive number of tasks per page", l.chunkSize)
	}
	c, err := l.client()
	if err != nil {
		return err
	}
	ns := c.namespace
	if l.allNamespaces {
		ns = ""
	}
	all, err := c.listTasks(ctx, ns, l.chunkSize)
	if err != nil {
		return err
	}
	now := l.now()
	shown := all[:0]
	for _, t := range all {
		if l.queue != "" && t.Spec.Queue != l.queue {
			continue
		}
		if len(wanted) > 0 && !wanted[t.Status.Phase] {
			continue
		}
		if l.dueWithin > 0 && (!t.notFiredYet() || t.due.IsZero() || t.due.After(now.Add(l.dueWithin))) {
			continue
		}
		shown = append(shown, t)
	}
	sortByDue(shown)
	w := bufio.NewWriterSize(l.out, 64<<10)
	defer w.Flush()
	switch l.output {
	case "json", "yaml":
		return printList(w, shown, l.output)
	}
	if len(shown) == 0 {
		where := "in namespace " + ns
		if ns == "" {
			where = "in any namespace"
		}
		fmt.Fprintf(l.errOut, "No DelayedTasks found %s%s.\n", where, filterNote(l))
		return nil
	}
	printTable(w, shown, now, l.allNamespaces, l.output == "wide")
	return nil
}

func filterNote(l *listOptions) string {
	var parts []string
	if l.queue != "" {
		parts = append(parts, "in queue "+l.queue)
	}
	if len(l.phases) > 0 {
		parts = append(parts, "in phase "+strings.Join(l.phases, ","))
	}
	if l.dueWithin > 0 {
		parts = append(parts, "due within "+l.dueWithin.String())
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}

func printTable(out io.Writer, list []*task, now time.Time, namespaces, wide bool) {
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	header := []string{"NAME", "DUE", "PHASE", "KIND", "QUEUE", "WAITING"}
	if namespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	if wide {
		header = append(header, "DUE-TIME", "TARGET", "MESSAGE")
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, t := range list {
		row := []string{t.Metadata.Name, t.countdown(now), orDash(t.Status.Phase), t.kind(), orDash(t.Spec.Queue), orDash(t.waiting())}
		if namespaces {
			row = append([]string{t.Metadata.Namespace}, row...)
		}
		if wide {
			row = append(row, orDash(t.Status.DueTime), orDash(t.target()), orDash(t.message()))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// target is where firing goes: the Job's name once created, else the sink's URL or reference.
func (t *task) target() string {
	switch {
	case t.Status.JobName != "":
		return "job/" + t.Status.JobName
	case t.Status.SinkURI != "":
		return t.Status.SinkURI
	case t.Spec.Sink != nil && t.Spec.Sink.Ref != nil:
		return strings.ToLower(t.Spec.Sink.Ref.Kind) + "/" + t.Spec.Sink.Ref.Name + t.Spec.Sink.URI
	case t.Spec.Sink != nil:
		return t.Spec.Sink.URI
	}
	return ""
}

// message: what holds the task (its Queued or Ready condition's message), else the status message.
func (t *task) message() string {
	reason := t.waiting()
	for _, kind := range []string{"Queued", "Ready"} {
		if c := t.condition(kind); c != nil && c.Reason == reason && reason != "" && c.Message != "" {
			return oneLine(c.Message)
		}
	}
	return oneLine(t.Status.Message)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printList prints the tasks as kubectl get -o json|yaml does: a v1 List of the objects as read.
func printList(out io.Writer, list []*task, format string) error {
	var buf bytes.Buffer
	buf.WriteString(`{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[`)
	for i, t := range list {
		if i > 0 {
			buf.WriteByte(',')
		}
		item, err := withoutManagedFields(t.raw)
		if err != nil {
			return err
		}
		buf.Write(item)
	}
	buf.WriteString("]}")
	if format == "yaml" {
		y, err := yaml.JSONToYAML(buf.Bytes())
		if err != nil {
			return err
		}
		_, err = out.Write(y)
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, buf.Bytes(), "", "    "); err != nil {
		return err
	}
	pretty.WriteByte('\n')
	_, err := out.Write(pretty.Bytes())
	return err
}

// withoutManagedFields drops metadata.managedFields, as kubectl get -o json|yaml does unless asked
// for them (--show-managed-fields).
func withoutManagedFields(raw []byte) ([]byte, error) {
	var object map[string]any
	if err := json.Unmarshal(raw, &object); err != nil {
		return nil, err
	}
	if metadata, ok := object["metadata"].(map[string]any); ok {
		delete(metadata, "managedFields")
	}
	return json.Marshal(object)
}
