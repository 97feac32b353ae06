package main

import (
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

func mustTask(t *testing.T, json string) *task {
	t.Helper()
	tk, err := decodeTask([]byte(json))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestHumanDurations(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                 "0s",
		200 * time.Millisecond:            "1s",
		3 * time.Second:                   "3s",
		59 * time.Second:                  "59s",
		time.Minute:                       "1m",
		4*time.Minute + 12*time.Second:    "4m12s",
		3*time.Hour + 5*time.Minute + 9e9: "3h5m",
		2 * time.Hour:                     "2h",
		50*time.Hour + 10*time.Minute:     "2d2h",
		48 * time.Hour:                    "2d",
	} {
		if got := human(d); got != want {
			t.Errorf("human(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestCountdownBeforeAfterAndOnceFired(t *testing.T) {
	due := func(phase, at string) *task {
		return mustTask(t, `{"metadata":{"name":"a"},"status":{"phase":"`+phase+`","dueTime":"`+at+`"}}`)
	}
	cases := []struct {
		task *task
		want string
	}{
		{due("Scheduled", "2026-12-05T12:04:12.000Z"), "in 4m12s"},
		{due("Scheduled", "2026-12-05T11:59:57.000Z"), "overdue 3s"},
		{due("Suspended", "2026-12-05T10:00:00.000Z"), "overdue 2h"},
		{due("Fired", "2026-12-05T11:57:00.000Z"), "3m ago"},
		{due("Running", "2026-12-05T11:59:00.000Z"), "1m ago"},
		{mustTask(t, `{"metadata":{"name":"a"},"status":{"phase":"Invalid"}}`), "-"},
		{mustTask(t, `{"metadata":{"name":"a"}}`), "-"},
	}
	for _, c := range cases {
		if got := c.task.countdown(now); got != c.want {
			t.Errorf("%s %s: countdown %q, want %q", c.task.Status.Phase, c.task.Status.DueTime, got, c.want)
		}
	}
}

func TestKind(t *testing.T) {
	for json, want := range map[string]string{
		`{"spec":{"delay":"1m"}}`:                                                   "status",
		`{"spec":{"delay":"1m","jobTemplate":{"spec":{}}}}`:                         "job",
		`{"spec":{"delay":"1m","sink":{"uri":"https://hooks.example.com/x"}}}`:      "sink",
		`{"spec":{"delay":"1m","sink":{"ref":{"kind":"Service","name":"orders"}}}}`: "sink",
	} {
		if got := mustTask(t, json).kind(); got != want {
			t.Errorf("%s: kind %q, want %q", json, got, want)
		}
	}
}

func TestWaitingNamesWhatHoldsTheTask(t *testing.T) {
	for json, want := range map[string]string{
		`{"status":{"phase":"Suspended","conditions":[{"type":"Ready","status":"True","reason":"Suspended"}]}}`:                                                          "Suspended",
		`{"status":{"phase":"Scheduled","conditions":[{"type":"Ready","status":"True","reason":"Scheduled"},{"type":"Queued","status":"True","reason":"QueuePaused"}]}}`: "QueuePaused",
		`{"status":{"phase":"Scheduled","conditions":[{"type":"Queued","status":"True","reason":"RateLimited"}]}}`:                                                       "RateLimited",
		`{"status":{"phase":"Scheduled","conditions":[{"type":"Queued","status":"False","reason":"Dispatched"}]}}`:                                                       "",
		`{"status":{"phase":"Scheduled","conditions":[{"type":"Ready","status":"False","reason":"AdmissionPolicyMissing"}]}}`:                                            "AdmissionPolicyMissing",
		`{"status":{"phase":"Scheduled","conditions":[{"type":"Ready","status":"False","reason":"NotAdmitted"}]}}`:                                                       "NotAdmitted",
		`{"status":{"phase":"Scheduled","conditions":[{"type":"Ready","status":"True","reason":"Scheduled"}]}}`:                                                          "",
		`{"status":{"phase":"Running","delivery":{"attempts":2,"nextAttemptTime":"2026-12-05T12:00:04.000Z"}}}`:                                                          "Retrying",
		`{"status":{"phase":"Running","jobName":"a-1234abcd"}}`:                                                                                                          "",
		`{"status":{"phase":"Failed","conditions":[{"type":"Ready","status":"False","reason":"Failed"}]}}`:                                                               "",
		`{"spec":{"suspend":true}}`: "Suspended",
	} {
		if got := mustTask(t, json).waiting(); got != want {
			t.Errorf("%s: waiting %q, want %q", json, got, want)
		}
	}
}

func TestSortByDueThenNamespaceAndNameWithoutDueTimeLast(t *testing.T) {
	list := []*task{
		mustTask(t, `{"metadata":{"namespace":"b","name":"none"},"status":{"phase":"Invalid"}}`),
		mustTask(t, `{"metadata":{"namespace":"b","name":"late"},"status":{"dueTime":"2026-12-05T13:00:00.000Z"}}`),
		mustTask(t, `{"metadata":{"namespace":"b","name":"tie"},"status":{"dueTime":"2026-12-05T12:30:00.000Z"}}`),
		mustTask(t, `{"metadata":{"namespace":"a","name":"tie"},"status":{"dueTime":"2026-12-05T12:30:00.000Z"}}`),
		mustTask(t, `{"metadata":{"namespace":"b","name":"early"},"status":{"dueTime":"2026-12-05T11:00:00.000Z"}}`),
	}
	sortByDue(list)
	var got []string
	for _, tk := range list {
		got = append(got, tk.Metadata.Namespace+"/"+tk.Metadata.Name)
	}
	if want := "b/early a/tie b/tie b/late b/none"; strings.Join(got, " ") != want {
		t.Errorf("order %v, want %s", got, want)
	}
}

func TestPhaseFlagIsCaseInsensitiveAndRefusesUnknownNamingTheChoices(t *testing.T) {
	if p, err := canonicalPhase("scheduled"); err != nil || p != "Scheduled" {
		t.Errorf("scheduled: %q %v", p, err)
	}
	_, err := canonicalPhase("Pending")
	if err == nil || !strings.Contains(err.Error(), "--phase") || !strings.Contains(err.Error(), "Suspended") {
		t.Errorf("Pending: %v", err)
	}
}

func TestWhySaysWhatHoldsATaskInAPausedQueueAndHowToLiftIt(t *testing.T) {
	tk := mustTask(t, `{"metadata":{"namespace":"shop","name":"mail","uid":"u"},
	  "spec":{"delay":"5m","queue":"emails","sink":{"ref":{"kind":"Service","name":"mailer"}},"startingDeadlineSeconds":600},
	  "status":{"phase":"Scheduled","dueTime":"2026-12-05T11:59:00.000Z",
	    "conditions":[{"type":"Ready","status":"True","reason":"Scheduled"},{"type":"Queued","status":"True","reason":"QueuePaused","message":"queue emails is paused"}]}}`)
	paused := true
	q := &queue{}
	q.Spec.Paused = paused
	var b strings.Builder
	explainTask(&b, tk, q, nil, nil, nil, 5, now)
	out := b.String()
	for _, want := range []string{
		"DelayedTask shop/mail (sink) is Scheduled.",
		"overdue 1m",
		"Service mailer",
		"up to 4 attempts",
		"kubectl dt resume-queue emails -n shop",
		"(QueuePaused)",
		"it is Missed",
		"Events: none",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("why output lacks %q:\n%s", want, out)
		}
	}
}
