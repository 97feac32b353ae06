package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// task holds the fields of a DelayedTask the plugin shows, and the object as the server sent it.
type task struct {
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               string            `json:"uid"`
		Generation        int64             `json:"generation"`
		CreationTimestamp string            `json:"creationTimestamp"`
		Annotations       map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		RunAt                   string          `json:"runAt"`
		TimeZone                string          `json:"timeZone"`
		Delay                   string          `json:"delay"`
		Suspend                 bool            `json:"suspend"`
		Queue                   string          `json:"queue"`
		StartingDeadlineSeconds *int64          `json:"startingDeadlineSeconds"`
		JobTemplate             json.RawMessage `json:"jobTemplate"`
		Sink                    *struct {
			Ref *struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Name       string `json:"name"`
			} `json:"ref"`
			URI      string `json:"uri"`
			Audience string `json:"audience"`
		} `json:"sink"`
		Delivery *struct {
			Retry         *int   `json:"retry"`
			BackoffPolicy string `json:"backoffPolicy"`
			BackoffDelay  string `json:"backoffDelay"`
		} `json:"delivery"`
	} `json:"spec"`
	Status struct {
		Phase              string `json:"phase"`
		DueTime            string `json:"dueTime"`
		FiredTime          string `json:"firedTime"`
		JobName            string `json:"jobName"`
		Message            string `json:"message"`
		ObservedGeneration int64  `json:"observedGeneration"`
		SinkURI            string `json:"sinkUri"`
		FireNowHandled     string `json:"fireNowHandled"`
		Delivery           *struct {
			Attempts        int    `json:"attempts"`
			LastAttemptTime string `json:"lastAttemptTime"`
			NextAttemptTime string `json:"nextAttemptTime"`
			ResponseCode    *int   `json:"responseCode"`
			DeadLettered    bool   `json:"deadLettered"`
		} `json:"delivery"`
		Conditions []condition `json:"conditions"`
	} `json:"status"`

	raw json.RawMessage
	due time.Time // zero when the operator has not computed it (not yet reconciled, Invalid)
}

type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime"`
}

type queue struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		MaxDispatchesPerSecond  *float64 `json:"maxDispatchesPerSecond"`
		MaxBurst                *int64   `json:"maxBurst"`
		MaxConcurrentDispatches *int64   `json:"maxConcurrentDispatches"`
		Paused                  bool     `json:"paused"`
	} `json:"spec"`
	Status struct {
		Pending              *int64 `json:"pending"`
		Waiting              *int64 `json:"waiting"`
		InFlight             *int64 `json:"inFlight"`
		OldestWaitingDueTime string `json:"oldestWaitingDueTime"`
	} `json:"status"`
}

type event struct {
	Type           string `json:"type"`
	Reason         string `json:"reason"`
	Message        string `json:"message"`
	Count          int    `json:"count"`
	FirstTimestamp string `json:"firstTimestamp"`
	LastTimestamp  string `json:"lastTimestamp"`
	EventTime      string `json:"eventTime"`
	Metadata       struct {
		CreationTimestamp string `json:"creationTimestamp"`
	} `json:"metadata"`
}

// last is when the Event last happened: lastTimestamp, else eventTime, else its creation.
func (e event) last() time.Time {
	for _, s := range []string{e.LastTimestamp, e.EventTime, e.FirstTimestamp, e.Metadata.CreationTimestamp} {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

func decodeTask(raw []byte) (*task, error) {
	t := &task{raw: raw}
	if err := json.Unmarshal(raw, t); err != nil {
		return nil, fmt.Errorf("reading a DelayedTask: %w", err)
	}
	if d, err := time.Parse(time.RFC3339Nano, t.Status.DueTime); err == nil {
		t.due = d
	}
	return t, nil
}

// The phases of the contract; the finished ones never fire again for their due time.
var (
	phases   = []string{"Scheduled", "Suspended", "Running", "Fired", "Succeeded", "Failed", "Missed", "Invalid"}
	finished = map[string]bool{"Fired": true, "Succeeded": true, "Failed": true, "Missed": true}
)

// kind is what firing does: create a Job, deliver to a sink, or only record it in the status.
func (t *task) kind() string {
	switch {
	case len(t.Spec.JobTemplate) > 0 && string(t.Spec.JobTemplate) != "null":
		return "job"
	case t.Spec.Sink != nil:
		return "sink"
	}
	return "status"
}

// notFiredYet: the task may still fire for its current due time (its countdown counts down).
func (t *task) notFiredYet() bool {
	return t.Status.Phase == "" || t.Status.Phase == "Scheduled" || t.Status.Phase == "Suspended"
}

func (t *task) condition(kind string) *condition {
	for i := range t.Status.Conditions {
		if t.Status.Conditions[i].Type == kind {
			return &t.Status.Conditions[i]
		}
	}
	return nil
}

// waiting is why a task that could fire does not: the reason of what holds it, "" when nothing does.
// Suspended (spec.suspend), Ready=False while Scheduled (AdmissionPolicyMissing, NotAdmitted), Queued=True
// (QueuePaused, RateLimited, ConcurrencyLimited, QueueMissing), or a sink delivery waiting for its
// next attempt (Retrying).
func (t *task) waiting() string {
	phase := t.Status.Phase
	if phase == "Suspended" {
		return "Suspended"
	}
	if phase == "Scheduled" || phase == "" {
		if r := t.condition("Ready"); r != nil && r.Status == "False" && r.Reason != "" {
			return r.Reason
		}
		if q := t.condition("Queued"); q != nil && q.Status == "True" && q.Reason != "" {
			return q.Reason
		}
		if phase == "" && t.Spec.Suspend {
			return "Suspended"
		}
	}
	if phase == "Running" && t.Status.Delivery != nil && t.Status.Delivery.NextAttemptTime != "" {
		return "Retrying"
	}
	return ""
}

// countdown: "in 4m12s" before the due time, "overdue 3s" after it while the task has not fired,
// "4m ago" for a task that fired (or finished), "-" without a due time.
func (t *task) countdown(now time.Time) string {
	if t.due.IsZero() {
		return "-"
	}
	d := t.due.Sub(now)
	if !t.notFiredYet() {
		if d > 0 {
			return "in " + human(d)
		}
		return human(-d) + " ago"
	}
	if d > 0 {
		return "in " + human(d)
	}
	return "overdue " + human(-d)
}

// human prints a duration as kubectl does its ages, with one more unit: 42s, 4m12s, 3h5m, 2d4h.
// Seconds are rounded up before the due time (in 0.2s reads "in 1s") and down after it.
func human(d time.Duration) string {
	s := int64(d / time.Second)
	if d%time.Second != 0 && d > 0 && d < time.Minute {
		s++
	}
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 86400:
		if (s%3600)/60 == 0 {
			return fmt.Sprintf("%dh", s/3600)
		}
		return fmt.Sprintf("%dh%dm", s/3600, (s%3600)/60)
	default:
		if (s%86400)/3600 == 0 {
			return fmt.Sprintf("%dd", s/86400)
		}
		return fmt.Sprintf("%dd%dh", s/86400, (s%86400)/3600)
	}
}

// sortByDue orders tasks by due time, earliest first; ties by namespace and name; tasks without a
// due time last.
func sortByDue(list []*task) {
	sort.SliceStable(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.due.IsZero() != b.due.IsZero() {
			return !a.due.IsZero()
		}
		if !a.due.Equal(b.due) {
			return a.due.Before(b.due)
		}
		if a.Metadata.Namespace != b.Metadata.Namespace {
			return a.Metadata.Namespace < b.Metadata.Namespace
		}
		return a.Metadata.Name < b.Metadata.Name
	})
}

// canonicalPhase returns the contract's spelling of a phase typed in any case, or an error naming them.
func canonicalPhase(s string) (string, error) {
	for _, p := range phases {
		if strings.EqualFold(p, s) {
			return p, nil
		}
	}
	return "", fmt.Errorf("--phase %q is not a phase: use one or more (comma-separated) of %s", s, strings.Join(phases, ", "))
}
