package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

type whyOptions struct {
	*options
	events int
	now    func() time.Time
}

func newWhyCommand(o *options) *cobra.Command {
	w := &whyOptions{options: o, now: time.Now}
	cmd := &cobra.Command{
		Use:   "why NAME",
		Short: "Explain one DelayedTask: when it is due, what it will do, what holds it, its conditions and last Events",
		Long: `Explain one DelayedTask in sentences: its due time and countdown, what firing will do (a Job, a
delivery to a sink, a status record), what holds it (spec.suspend, its queue and that queue's state,
the admission policy, a delivery waiting for its next attempt, a fire-now request not yet acted on),
its starting deadline, then its conditions and its last Events.`,
		Example: `  kubectl dt why remind-unpaid-order-42 -n shop`,
		Args:    exactlyOneName("why"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return w.run(cmd.Context(), args[0])
		},
	}
	cmd.Flags().IntVar(&w.events, "events", 5, "show this many of the task's last Events")
	return cmd
}

func exactlyOneName(command string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("kubectl dt %s takes one task name, got %d (kubectl dt list shows the names)", command, len(args))
		}
		return nil
	}
}

func (w *whyOptions) run(ctx context.Context, name string) error {
	c, err := w.client()
	if err != nil {
		return err
	}
	t, err := c.getTask(ctx, c.namespace, name)
	if err != nil {
		return err
	}
	var q *queue
	queueErr := error(nil)
	if t.Spec.Queue != "" {
		q, queueErr = c.getQueue(ctx, c.namespace, t.Spec.Queue)
	}
	events, eventsErr := c.events(ctx, c.namespace, t.Metadata.UID)
	explainTask(w.out, t, q, queueErr, events, eventsErr, w.events, w.now())
	return nil
}

func explainTask(out io.Writer, t *task, q *queue, queueErr error, events []event, eventsErr error, maxEvents int, now time.Time) {
	p := func(format string, a ...any) { fmt.Fprintf(out, format+"\n", a...) }
	phase := t.Status.Phase
	if phase == "" {
		phase = "not yet seen by the operator (no status)"
	}
	p("DelayedTask %s/%s (%s) is %s.", t.Metadata.Namespace, t.Metadata.Name, t.kind(), phase)

	// When.
	switch {
	case !t.due.IsZero():
		source := "spec.runAt " + t.Spec.RunAt
		if t.Spec.TimeZone != "" {
			source += " in " + t.Spec.TimeZone
		}
		if t.Spec.Delay != "" {
			source = "spec.delay " + t.Spec.Delay + " after its creation at " + t.Metadata.CreationTimestamp
		}
		p("Due: %s, %s (%s).", t.Status.DueTime, t.countdown(now), source)
	case t.Status.Phase == "Invalid":
		p("Due: never, while the spec is invalid.")
	default:
		p("Due: not computed yet; the operator writes status.dueTime when it first sees the task.")
	}
	if t.Metadata.Generation != 0 && t.Status.ObservedGeneration != 0 && t.Status.ObservedGeneration < t.Metadata.Generation {
		p("The operator has not seen the latest spec yet (generation %d, status for %d): what follows may change.",
			t.Metadata.Generation, t.Status.ObservedGeneration)
	}

	// What it will do (or did).
	p("%s", t.action())

	// What holds it.
	for _, line := range t.holds(q, queueErr, now) {
		p("%s", line)
	}
	if t.Spec.StartingDeadlineSeconds != nil && t.notFiredYet() && !t.due.IsZero() {
		deadline := t.due.Add(time.Duration(*t.Spec.StartingDeadlineSeconds) * time.Second)
		if deadline.After(now) {
			p("Deadline: spec.startingDeadlineSeconds %d: if it cannot fire by %s (%s), it is Missed; waiting counts.",
				*t.Spec.StartingDeadlineSeconds, deadline.UTC().Format(time.RFC3339), "in "+human(deadline.Sub(now)))
		} else {
			p("Deadline: spec.startingDeadlineSeconds %d passed at %s: it will not fire (Missed).",
				*t.Spec.StartingDeadlineSeconds, deadline.UTC().Format(time.RFC3339))
		}
	}
	if t.Status.Message != "" {
		p("Message: %s", t.Status.Message)
	}

	if len(t.Status.Conditions) > 0 {
		p("")
		p("Conditions:")
		tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  TYPE\tSTATUS\tREASON\tSINCE\tMESSAGE")
		for _, c := range t.Status.Conditions {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", c.Type, c.Status, orDash(c.Reason), since(c.LastTransitionTime, now), oneLine(c.Message))
		}
		tw.Flush()
	}
	p("")
	switch {
	case eventsErr != nil:
		p("Events: not readable (%v).", eventsErr)
	case len(events) == 0:
		p("Events: none (Events expire after an hour).")
	default:
		sort.SliceStable(events, func(i, j int) bool { return events[i].last().Before(events[j].last()) })
		if maxEvents >= 0 && len(events) > maxEvents {
			events = events[len(events)-maxEvents:]
		}
		p("Last Events:")
		tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  LAST SEEN\tTYPE\tREASON\tCOUNT\tMESSAGE")
		for _, e := range events {
			count := e.Count
			if count == 0 {
				count = 1
			}
			last := "-"
			if ts := e.last(); !ts.IsZero() {
				last = human(now.Sub(ts)) + " ago"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", last, e.Type, e.Reason, count, oneLine(e.Message))
		}
		tw.Flush()
	}
}

func since(ts string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return "-"
	}
	if now.Before(t) {
		return "0s ago"
	}
	return human(now.Sub(t)) + " ago"
}

// action says what firing does, or did.
func (t *task) action() string {
	switch t.kind() {
	case "job":
		if t.Status.JobName != "" {
			return fmt.Sprintf("Action: it created Job %s at %s.", t.Status.JobName, orDash(t.Status.FiredTime))
		}
		return "Action: it will create a Job from spec.jobTemplate."
	case "sink":
		dest := t.target()
		if t.Spec.Sink.Ref != nil && t.Status.SinkURI == "" {
			dest = t.Spec.Sink.Ref.Kind + " " + t.Spec.Sink.Ref.Name
			if t.Spec.Sink.URI != "" {
				dest += " (path " + t.Spec.Sink.URI + ")"
			}
		}
		retry, policy, delay := 3, "exponential", "1s"
		if d := t.Spec.Delivery; d != nil {
			if d.Retry != nil {
				retry = *d.Retry
			}
			if d.BackoffPolicy != "" {
				policy = d.BackoffPolicy
			}
			if d.BackoffDelay != "" {
				delay = d.BackoffDelay
			}
		}
		return fmt.Sprintf("Action: it sends a CloudEvent to %s, up to %d attempts (%d retries, %s backoff from %s).",
			dest, retry+1, retry, policy, delay)
	}
	return "Action: it only records the firing in its status (phase Fired), for other controllers and people to watch."
}

// holds lists, in sentences, what keeps the task from firing now, with the command that lifts it.
func (t *task) holds(q *queue, queueErr error, now time.Time) []string {
	var lines []string
	ns, name := t.Metadata.Namespace, t.Metadata.Name
	if v, ok := t.Metadata.Annotations[fireNowKey]; ok && v != t.Status.FireNowHandled {
		if t.notFiredYet() {
			lines = append(lines, fmt.Sprintf("Fire now: requested (%s=%s), not yet acted on by the operator; it fires at once, whatever holds it below.", fireNowKey, v))
		} else {
			lines = append(lines, fmt.Sprintf("Fire now: %s=%s is set, but the task has already fired for its due time: it does nothing.", fireNowKey, v))
		}
	} else if ok {
		lines = append(lines, fmt.Sprintf("Fire now: the operator acted on %s=%s.", fireNowKey, v))
	}
	if !t.notFiredYet() {
		if t.Status.Phase == "Running" && t.Status.Delivery != nil {
			d := t.Status.Delivery
			answer := "no answer"
			if d.ResponseCode != nil {
				answer = fmt.Sprintf("answer %d", *d.ResponseCode)
			}
			line := fmt.Sprintf("Retries: attempt %d got %s", d.Attempts, answer)
			if d.NextAttemptTime != "" {
				if next, err := time.Parse(time.RFC3339Nano, d.NextAttemptTime); err == nil {
					line += fmt.Sprintf("; the next attempt is at %s (%s)", d.NextAttemptTime, countdownTo(next, now))
				}
			}
			lines = append(lines, line+".")
		}
		return lines
	}
	if t.Spec.Suspend || t.Status.Phase == "Suspended" {
		lines = append(lines, fmt.Sprintf("Held: spec.suspend is true, so it does not fire (kubectl dt resume %s -n %s; overdue, it then fires at once unless its deadline passed).", name, ns))
	}
	if r := t.condition("Ready"); r != nil && r.Status == "False" {
		switch r.Reason {
		case "AdmissionPolicyMissing":
			lines = append(lines, "Held: the admission policy is missing, so the operator creates no Job and sends no token (AdmissionPolicyMissing): "+r.Message+" It fires within 30 s of the policy's return.")
		case "NotAdmitted":
			lines = append(lines, "Held: the task was written while the admission policy was missing, so it was never checked (NotAdmitted): "+r.Message+" Write it again (any spec change, or delete and create it).")
		default:
			if r.Reason != "" && r.Reason != t.Status.Phase {
				lines = append(lines, fmt.Sprintf("Held: Ready is False (%s): %s", r.Reason, r.Message))
			}
		}
	}
	if t.Spec.Queue != "" {
		lines = append(lines, t.queueLine(q, queueErr))
	}
	if len(lines) == 0 || (len(lines) == 1 && strings.HasPrefix(lines[0], "Fire now: the operator acted")) {
		if !t.due.IsZero() && t.due.After(now) {
			lines = append(lines, "Held: nothing; it fires at its due time.")
		} else if !t.due.IsZero() {
			lines = append(lines, "Held: nothing the status shows; an overdue task fires within moments unless the operator is not running (check its pods).")
		}
	}
	return lines
}

func (t *task) queueLine(q *queue, queueErr error) string {
	ns, qn := t.Metadata.Namespace, t.Spec.Queue
	held := ""
	if c := t.condition("Queued"); c != nil && c.Status == "True" {
		held = fmt.Sprintf(" It waits in it now (%s): %s", c.Reason, c.Message)
	}
	switch {
	case queueErr != nil:
		return fmt.Sprintf("Queue: %s (not readable: %v).%s", qn, queueErr, held)
	case q == nil:
		return fmt.Sprintf("Queue: %s does not exist in namespace %s, so the task waits for it (QueueMissing) when due; create the DelayedTaskQueue, or remove spec.queue.%s", qn, ns, held)
	}
	var limits []string
	if q.Spec.Paused {
		limits = append(limits, fmt.Sprintf("paused (none of its tasks fires; kubectl dt resume-queue %s -n %s)", qn, ns))
	}
	if r := q.Spec.MaxDispatchesPerSecond; r != nil {
		limits = append(limits, fmt.Sprintf("at most %g dispatches per second", *r))
	}
	if c := q.Spec.MaxConcurrentDispatches; c != nil {
		limits = append(limits, fmt.Sprintf("at most %d in flight", *c))
	}
	if len(limits) == 0 {
		limits = append(limits, "no limits and not paused")
	}
	state := ""
	if q.Status.Waiting != nil {
		state = fmt.Sprintf("; %d waiting", *q.Status.Waiting)
		if q.Status.InFlight != nil {
			state += fmt.Sprintf(", %d in flight", *q.Status.InFlight)
		}
		if q.Status.OldestWaitingDueTime != "" {
			state += ", the oldest due at " + q.Status.OldestWaitingDueTime
		}
	}
	return fmt.Sprintf("Queue: %s: %s%s.%s", qn, strings.Join(limits, ", "), state, held)
}

func countdownTo(t, now time.Time) string {
	if t.After(now) {
		return "in " + human(t.Sub(now))
	}
	return "overdue " + human(now.Sub(t))
}
