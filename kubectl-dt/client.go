package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

const (
	group        = "delayedtask.io"
	apiVersion   = "v1alpha1"
	tasks        = "delayedtasks"
	queues       = "delayedtaskqueues"
	fireNowKey   = "delayedtask.io/fire-now"
	defaultChunk = 500
)

// statusCodecs decode the API server's error answers (metav1.Status) and nothing else: the plugin
// reads objects as raw JSON.
var statusCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	return serializer.NewCodecFactory(scheme)
}()

// client talks to the API server with plain REST calls: lists come back as raw JSON, decoded into
// only the fields the plugin shows (a 10,000-task list is decoded in a fraction of a second).
type client struct {
	rest      rest.Interface
	namespace string // the -n flag, else the kubeconfig context's namespace, else "default"
	explicit  bool   // -n was given
}

func (o *options) client() (*client, error) {
	cfg, err := o.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("%w (kubectl dt reads the kubeconfig as kubectl does: --kubeconfig, KUBECONFIG, ~/.kube/config)", err)
	}
	cfg = dynamic.ConfigFor(cfg)
	// Errors come back as metav1.Status; a serializer that knows it turns them into the API server's
	// own message ("... is forbidden: User ... cannot patch ...") instead of "unknown".
	cfg.NegotiatedSerializer = statusCodecs.WithoutConversion()
	// A person's command, a few requests: no client-side throttling of the pages of a large list.
	cfg.QPS = 100
	cfg.Burst = 200
	cfg.UserAgent = "kubectl-dt/" + version
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		return nil, err
	}
	ns, explicit, err := o.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	if o.flags.Namespace != nil && *o.flags.Namespace != "" {
		ns, explicit = *o.flags.Namespace, true
	}
	return &client{rest: rc, namespace: ns, explicit: explicit}, nil
}

func path(namespace, resource, name string) string {
	p := "/apis/" + group + "/" + apiVersion
	if namespace != "" {
		p += "/namespaces/" + url.PathEscape(namespace)
	}
	p += "/" + resource
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// listTasks reads every task of a namespace ("" for all), page by page, as kubectl get does.
func (c *client) listTasks(ctx context.Context, namespace string, chunk int64) ([]*task, error) {
	var all []*task
	cont := ""
	for {
		req := c.rest.Get().AbsPath(path(namespace, tasks, "")).Param("limit", fmt.Sprint(chunk))
		if cont != "" {
			req = req.Param("continue", cont)
		}
		body, err := raw(req.Do(ctx))
		if err != nil {
			return nil, explain(err, "list", tasks, namespace, "")
		}
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return nil, fmt.Errorf("reading the list of DelayedTasks: %w", err)
		}
		for _, raw := range page.Items {
			t, err := decodeTask(raw)
			if err != nil {
				return nil, err
			}
			all = append(all, t)
		}
		if page.Metadata.Continue == "" {
			return all, nil
		}
		cont = page.Metadata.Continue
	}
}

func (c *client) getTask(ctx context.Context, namespace, name string) (*task, error) {
	body, err := raw(c.rest.Get().AbsPath(path(namespace, tasks, name)).Do(ctx))
	if c.objectMissing(ctx, err, namespace, tasks) {
		return nil, missing(tasks, namespace, name)
	}
	if err != nil {
		return nil, explain(err, "get", tasks, namespace, name)
	}
	return decodeTask(body)
}

// getQueue returns the queue, or nil when it does not exist (a task may name a queue not created yet).
func (c *client) getQueue(ctx context.Context, namespace, name string) (*queue, error) {
	body, err := raw(c.rest.Get().AbsPath(path(namespace, queues, name)).Do(ctx))
	if c.objectMissing(ctx, err, namespace, queues) {
		return nil, nil
	}
	if err != nil {
		return nil, explain(err, "get", queues, namespace, name)
	}
	var q queue
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, fmt.Errorf("reading DelayedTaskQueue %s/%s: %w", namespace, name, err)
	}
	return &q, nil
}

// events returns the core/v1 Events recorded on the object with this uid.
func (c *client) events(ctx context.Context, namespace, uid string) ([]event, error) {
	body, err := raw(c.rest.Get().AbsPath("/api/v1/namespaces/"+url.PathEscape(namespace)+"/events").
		Param("fieldSelector", "involvedObject.uid="+uid).Do(ctx))
	if err != nil {
		return nil, explain(err, "list", "events", namespace, "")
	}
	var list struct {
		Items []event `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("reading Events: %w", err)
	}
	return list.Items, nil
}

// mergePatch applies a JSON merge patch (RFC 7386) and returns the object as the server answered.
func (c *client) mergePatch(ctx context.Context, resource, namespace, name string, patch map[string]any) ([]byte, error) {
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	body, err := raw(c.rest.Patch(types.MergePatchType).AbsPath(path(namespace, resource, name)).Body(data).Do(ctx))
	if c.objectMissing(ctx, err, namespace, resource) {
		return nil, missing(resource, namespace, name)
	}
	if err != nil {
		return nil, explain(err, "patch", resource, namespace, name)
	}
	return body, nil
}

// objectMissing tells a missing object from a missing resource type (the CRD is not installed):
// both answer 404, and the answer's details are not always decoded, so a 404 for an object is
// followed by one list of its collection, which a served resource answers.
func (c *client) objectMissing(ctx context.Context, err error, namespace, resource string) bool {
	if !apierrors.IsNotFound(err) {
		return false
	}
	_, listErr := raw(c.rest.Get().AbsPath(path(namespace, resource, "")).Param("limit", "1").Do(ctx))
	return listErr == nil
}

// missing says which object is not there and how to find the ones that are.
func missing(resource, namespace, name string) error {
	if resource == queues {
		return fmt.Errorf("DelayedTaskQueue %q not found in namespace %q (kubectl get delayedtaskqueues -n %s lists the queues there)", name, namespace, namespace)
	}
	return fmt.Errorf("DelayedTask %q not found in namespace %q (kubectl dt list -n %s lists the tasks there; kubectl dt list -A, every namespace)", name, namespace, namespace)
}

// explain turns an API error into one sentence that names what failed and the fix.
func explain(err error, verb, resource, namespace, name string) error {
	where := "in namespace " + quote(namespace)
	if namespace == "" {
		where = "in any namespace"
	}
	switch {
	case apierrors.IsNotFound(err):
		crd := resource + "." + group
		return fmt.Errorf("the API server does not serve %s/%s %s: the CustomResourceDefinition %s is not installed (install the operator's CRDs: kubectl apply -f crds/, or its Helm chart), or --context names another cluster",
			group, apiVersion, resource, crd)
	case apierrors.IsForbidden(err):
		role := "view"
		if verb == "patch" {
			role = "edit"
		}
		target := resource + "." + group
		if resource == "events" {
			target = "events"
		}
		check := "kubectl auth can-i " + verb + " " + target + " -n " + namespace
		if namespace == "" {
			check = "kubectl auth can-i " + verb + " " + target + " -A"
		}
		return fmt.Errorf("%s: kubectl dt needs %s on %s %s; ask for a Role that grants it, or the aggregated %q ClusterRole (check with: %s)",
			strings.TrimSpace(err.Error()), verb, target, where, role, check)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the API server did not accept your credentials (%v): log in again or pick another --context", err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return fmt.Errorf("%s %s %s: %w (is the API server up, and do --context, --server or the kubeconfig name the right one?)", verb, resource, where, err)
	}
	return fmt.Errorf("%s %s %s: %w", verb, resource, where, err)
}

func quote(s string) string { return "\"" + s + "\"" }

// raw is the answer's body, or the API server's own error: Result.Raw alone reports a refusal as
// "unknown", Result.Error reads the metav1.Status the server sent ("... is forbidden: User ...").
func raw(result rest.Result) ([]byte, error) {
	body, err := result.Raw()
	if err != nil {
		return nil, result.Error()
	}
	return body, nil
}
