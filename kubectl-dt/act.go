package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newFireNowCommand(o *options) *cobra.Command {
	now := time.Now
	return &cobra.Command{
		Use:   "fire-now NAME...",
		Short: "Fire DelayedTasks at once, even suspended or held by their queue (sets the annotation delayedtask.io/fire-now)",
		Long: `Fire DelayedTasks at once, as if now were their due time: sets the annotation
delayedtask.io/fire-now to the current time (RFC 3339, UTC) with a JSON merge patch. The operator fires
a task once per distinct value, even when it is suspended or held by a paused or limited queue, and
records the value in status.fireNowHandled. A task that has already fired for its due time is left
alone, with an error saying so. Needs patch on delayedtasks.`,
		Example: `  kubectl dt fire-now remind-unpaid-order-42 -n shop`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			return eachName(o, names, func(name string) error {
				return fireNow(cmd.Context(), c, o, name, now().UTC())
			})
		},
	}
}

func fireNow(ctx context.Context, c *client, o *options, name string, at time.Time) error {
	t, err := c.getTask(ctx, c.namespace, name)
	if err != nil {
		return err
	}
	if finished[t.Status.Phase] || t.Status.Phase == "Running" {
		return fmt.Errorf("DelayedTask %s/%s has already fired for its due time (%s): fire-now fires only a task that has not; change spec.runAt or spec.delay to schedule it again",
			c.namespace, name, t.Status.Phase)
	}
	value := at.Format("2006-01-02T15:04:05.000Z07:00")
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{fireNowKey: value}}}
	if _, err := c.mergePatch(ctx, tasks, c.namespace, name, patch); err != nil {
		return err
	}
	fmt.Fprintf(o.out, "delayedtask.delayedtask.io/%s fire-now requested (%s=%s)\n", name, fireNowKey, value)
	return nil
}

func newSuspendCommand(o *options, suspend bool) *cobra.Command {
	use, short, long, done := "suspend NAME...", "Suspend DelayedTasks (spec.suspend: true): they do not fire until resumed",
		`Suspend DelayedTasks: sets spec.suspend to true with a JSON merge patch. A suspended task does not
fire; resuming it schedules it again (already overdue, it fires at once unless its starting deadline
has passed). Needs patch on delayedtasks. A GitOps tool that manages the task may set it back.`, "suspended"
	if !suspend {
		use, short, long, done = "resume NAME...", "Resume suspended DelayedTasks (spec.suspend: false)",
			`Resume DelayedTasks: sets spec.suspend to false with a JSON merge patch. An overdue task then fires
at once unless its starting deadline has passed. Needs patch on delayedtasks.`, "resumed"
	}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long,
		Example: "  kubectl dt " + map[bool]string{true: "suspend", false: "resume"}[suspend] + " nightly-report -n shop",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			return eachName(o, names, func(name string) error {
				patch := map[string]any{"spec": map[string]any{"suspend": suspend}}
				if _, err := c.mergePatch(cmd.Context(), tasks, c.namespace, name, patch); err != nil {
					return err
				}
				fmt.Fprintf(o.out, "delayedtask.delayedtask.io/%s %s\n", name, done)
				return nil
			})
		},
	}
}

func newPauseCommand(o *options, pause bool) *cobra.Command {
	use, short, long, done := "pause QUEUE...", "Pause DelayedTaskQueues (spec.paused: true): none of their tasks fires",
		`Pause DelayedTaskQueues: sets spec.paused to true with a JSON merge patch. None of the queue's tasks
fires; tasks falling due wait (their condition Queued, reason QueuePaused) and their starting deadline
still counts. kubectl dt fire-now still fires one. Needs patch on delayedtaskqueues.`, "paused"
	if !pause {
		use, short, long, done = "resume-queue QUEUE...", "Resume paused DelayedTaskQueues (spec.paused: false)",
			`Resume DelayedTaskQueues: sets spec.paused to false with a JSON merge patch. The tasks that waited fire
oldest-due first, within the queue's rate and concurrency. Needs patch on delayedtaskqueues.`, "resumed"
	}
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long,
		Example: "  kubectl dt " + map[bool]string{true: "pause", false: "resume-queue"}[pause] + " emails -n shop",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, names []string) error {
			c, err := o.client()
			if err != nil {
				return err
			}
			return eachName(o, names, func(name string) error {
				patch := map[string]any{"spec": map[string]any{"paused": pause}}
				if _, err := c.mergePatch(cmd.Context(), queues, c.namespace, name, patch); err != nil {
					return err
				}
				fmt.Fprintf(o.out, "delayedtaskqueue.delayedtask.io/%s %s\n", name, done)
				return nil
			})
		},
	}
}

// errReported: the errors were printed already; exit 1 without another line.
var errReported = errors.New("reported")

// eachName acts on every name, going on after a failure; each failure is printed on its own line
// and the command then exits 1.
func eachName(o *options, names []string, act func(string) error) error {
	failed := false
	for _, n := range names {
		if err := act(n); err != nil {
			if len(names) == 1 {
				return err
			}
			fmt.Fprintln(o.errOut, "error: "+err.Error())
			failed = true
		}
	}
	if failed {
		return errReported
	}
	return nil
}
