package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// options shared by every command: kubectl's connection flags (--kubeconfig, --context, -n, ...).
type options struct {
	flags  *genericclioptions.ConfigFlags
	out    io.Writer
	errOut io.Writer
}

func newRootCommand(out, errOut io.Writer) *cobra.Command {
	o := &options{flags: genericclioptions.NewConfigFlags(false), out: out, errOut: errOut}
	root := &cobra.Command{
		Use:   "kubectl-dt",
		Short: "See and steer DelayedTasks: what fires next, why a task waits, fire now, suspend, pause a queue",
		Long: `kubectl dt shows DelayedTasks (delayedtask.io/v1alpha1) in due-time order and explains why a
task waits, and acts on tasks and queues with JSON merge patches.

It reads the kubeconfig and takes kubectl's flags (--kubeconfig, --context, -n, ...); it needs
list/get on delayedtasks (and events, delayedtaskqueues for "why"), and patch for the commands that act.`,
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl dt"},
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			DisableDefaultCmd: true,
		},
	}
	root.SetOut(out)
	root.SetErr(errOut)
	o.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newListCommand(o), newWhyCommand(o), newFireNowCommand(o),
		newSuspendCommand(o, true), newSuspendCommand(o, false),
		newPauseCommand(o, true), newPauseCommand(o, false),
		&cobra.Command{
			Use:   "version",
			Short: "Print the plugin's version",
			Args:  cobra.NoArgs,
			Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(out, "kubectl-dt "+version) },
		})
	return root
}
