// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	mccontext "mcr.dev/core/context"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/core/webhook"
)

// These tests call a Webhook through an http.ServeMux as a webhook server does, without API
// servers: what the members send is an AdmissionReview, built here.

// secretToken is the bearer token of the clusters the tests engage; no answer may quote it.
const secretToken = "tok-3b1f0c9e-very-secret"

// offlineCluster returns a cluster object whose API server is never called.
func offlineCluster(t *testing.T) cluster.Cluster {
	t.Helper()
	cl, err := cluster.New(&rest.Config{Host: "https://127.0.0.1:1", BearerToken: secretToken})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// serve returns a mux that serves w at its paths, as Register does on a webhook server.
func serve(w *webhook.Webhook) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(w.Path(), w)
	if w.PerClusterPaths() {
		mux.Handle(w.Path()+"/", w)
	}
	return mux
}

// review posts an AdmissionReview for a ConfigMap to path and returns the response.
func review(t *testing.T, h http.Handler, path string, op admissionv1.Operation, cm *corev1.ConfigMap) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(cm)
	if err != nil {
		t.Fatal(err)
	}
	req := admissionv1.AdmissionRequest{
		UID:       types.UID("uid-1"),
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespace: cm.Namespace,
		Name:      cm.Name,
		Operation: op,
	}
	if op == admissionv1.Delete {
		req.OldObject = runtime.RawExtension{Raw: raw}
	} else {
		req.Object = runtime.RawExtension{Raw: raw}
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &req,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST %s: HTTP %d: %s", path, rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Response == nil || out.Response.UID != req.UID {
		t.Fatalf("POST %s: answer %s is not for the request", path, rec.Body)
	}
	return out.Response
}

func configMap(annotations map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Annotations: annotations}}
}

// echo is a raw handler that allows every request with the cluster of its context as the
// message, and logs a line through the context's logger.
func echo(ctx context.Context, _ admission.Request) admission.Response {
	name, ok := mccontext.ClusterFrom(ctx)
	if _, hasObject := mccontext.ClusterObjectFrom(ctx); !ok || !hasObject {
		return admission.Errored(http.StatusInternalServerError, errors.New("no cluster in the context"))
	}
	ctrllog.FromContext(ctx).Info("Admitting")
	return admission.Allowed("cluster=" + string(name))
}

// Every engaged cluster is served at its own path, whatever its name: the local cluster at the
// base path, names with "/", ":", dots, spaces and non-ASCII under it. Paths of clusters not
// engaged, malformed and non-canonical paths are refused.
func TestPerClusterPathsRouteEveryName(t *testing.T) {
	w, err := webhook.New(admission.HandlerFunc(echo), webhook.Options{Path: "/hooks/echo"})
	if err != nil {
		t.Fatal(err)
	}
	mux := serve(w)
	names := []multicluster.ClusterName{"", "a", "team/east", "system:admin", ".", "..", ".hidden", "with space", "zürich", "~tilde", "a+b.kubeconfig+ctx"}
	cl := offlineCluster(t)
	for _, name := range names {
		if err := w.Engage(t.Context(), name, cl); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		resp := review(t, mux, w.PathFor(name), admissionv1.Create, configMap(nil))
		if !resp.Allowed || resp.Result.Message != "cluster="+string(name) {
			t.Errorf("cluster %q at %s: allowed=%v %q", name, w.PathFor(name), resp.Allowed, resp.Result.Message)
		}
	}
	for path, want := range map[string]string{
		"/hooks/echo/b":           `cluster "b" is not served by webhook /hooks/echo: not engaged`,
		"/hooks/echo/team/east":   "is not a cluster path of /hooks/echo",
		"/hooks/echo/%7E61":       "not escaped canonically",
		"/hooks/echo/team~2feast": "invalid escape",
		"/hooks/echo/a~2":         "truncated escape",
	} {
		resp := review(t, mux, path, admissionv1.Create, configMap(nil))
		if resp.Allowed || resp.Result.Code != http.StatusForbidden || !strings.Contains(resp.Result.Message, want) {
			t.Errorf("%s: allowed=%v %+v, want denied with %q", path, resp.Allowed, resp.Result, want)
		}
	}
}

// A cluster that is not engaged is served when Lookup finds it (the builder's Lookup is the
// provider's Get, so that sharded replicas serve members they do not own); the local cluster
// is served only when engaged.
func TestLookupServesClustersNotEngaged(t *testing.T) {
	cl := offlineCluster(t)
	var looked []multicluster.ClusterName
	w, err := webhook.New(admission.HandlerFunc(echo), webhook.Options{
		Path: "/echo",
		Lookup: func(_ context.Context, name multicluster.ClusterName) (cluster.Cluster, error) {
			looked = append(looked, name)
			if name == "owned-elsewhere" {
				return cl, nil
			}
			return nil, multicluster.ErrClusterNotFound
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := serve(w)
	if resp := review(t, mux, w.PathFor("owned-elsewhere"), admissionv1.Create, configMap(nil)); !resp.Allowed {
		t.Errorf("a cluster Lookup finds: %+v", resp.Result)
	}
	resp := review(t, mux, w.PathFor("gone"), admissionv1.Create, configMap(nil))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "not engaged, and looking it up: cluster not found") {
		t.Errorf("a cluster Lookup does not find: %+v", resp.Result)
	}
	if resp := review(t, mux, w.PathFor(""), admissionv1.Create, configMap(nil)); resp.Allowed {
		t.Error("the local cluster was served without being engaged")
	}
	if len(looked) != 2 {
		t.Errorf("Lookup was asked for %q, want the two members", looked)
	}
}

// Engaging is undone when the engage context ends, and only for that engagement: a cluster
// engaged again under the same name, even with the same cluster object, stays served when the
// old context ends.
func TestEngagementEndsWithItsContext(t *testing.T) {
	w, err := webhook.New(admission.HandlerFunc(echo), webhook.Options{Path: "/echo"})
	if err != nil {
		t.Fatal(err)
	}
	a := offlineCluster(t)
	first, stopFirst := context.WithCancel(t.Context())
	if err := w.Engage(first, "a", a); err != nil {
		t.Fatal(err)
	}
	if err := w.Engage(t.Context(), "b", offlineCluster(t)); err != nil {
		t.Fatal(err)
	}
	// The same cluster object again, as a manager re-engages a cluster.
	if err := w.Engage(t.Context(), "a", a); err != nil {
		t.Fatal(err)
	}
	stopFirst()
	ended, end := context.WithCancel(t.Context())
	end()
	if err := w.Engage(ended, "c", offlineCluster(t)); err != nil {
		t.Fatal(err)
	}
	testcheck.WaitFor(t, "the ended engagements to be gone", func() bool {
		got := w.Clusters()
		return len(got) == 2 && got[0] == "a" && got[1] == "b"
	})
	// The old engagement's end, run after a moment, must not take the new one with it.
	time.Sleep(100 * time.Millisecond)
	if resp := review(t, serve(w), w.PathFor("a"), admissionv1.Create, configMap(nil)); !resp.Allowed {
		t.Errorf("a, engaged again, is not served after its first engagement ended: %+v", resp.Result)
	}
	if err := w.Engage(t.Context(), "d", nil); err == nil {
		t.Error("engaging a nil cluster succeeded")
	}
}

// leakyValidator fails the way a validator that quotes its client's error does.
type leakyValidator struct{ status bool }

func (v leakyValidator) ValidateCreate(_ context.Context, name multicluster.ClusterName, cl cluster.Cluster, _ *corev1.ConfigMap) (admission.Warnings, error) {
	msg := `Get "https://admin:hunter2-password@east.example:6443/api/v1/namespaces?access_token=abcdef123456": token ` +
		cl.GetConfig().BearerToken + " rejected in cluster " + string(name)
	warnings := admission.Warnings{"the token was " + cl.GetConfig().BearerToken}
	if v.status {
		return warnings, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cm", errors.New(msg))
	}
	return warnings, errors.New(msg)
}

func (leakyValidator) ValidateUpdate(context.Context, multicluster.ClusterName, cluster.Cluster, *corev1.ConfigMap, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

func (leakyValidator) ValidateDelete(context.Context, multicluster.ClusterName, cluster.Cluster, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

// What the API server shows the client, and what the webhook logs, quotes no credentials: not
// those of URLs in a handler's error, not the member's own token, whether the handler's error
// is a plain error or a status error (whose code survives). Log lines about a request carry
// its cluster.
func TestNoCredentialsInAnswersOrLogs(t *testing.T) {
	for _, status := range []bool{false, true} {
		var logs providertest.LogBuffer
		w, err := webhook.New(webhook.ValidatorHandler(clientgoscheme.Scheme, leakyValidator{status: status}), webhook.Options{
			Path:   "/leaky",
			Logger: logs.Logger(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Engage(t.Context(), "east", offlineCluster(t)); err != nil {
			t.Fatal(err)
		}
		resp := review(t, serve(w), w.PathFor("east"), admissionv1.Create, configMap(nil))
		answer, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"hunter2", "abcdef123456", secretToken} {
			if bytes.Contains(answer, []byte(secret)) {
				t.Errorf("status error %v: the answer quotes %q: %s", status, secret, answer)
			}
		}
		if resp.Allowed || !strings.Contains(resp.Result.Message, "east.example:6443") || !strings.Contains(resp.Result.Message, "rejected in cluster east") {
			t.Errorf("status error %v: %+v, want a denial that keeps what is not a credential", status, resp.Result)
		}
		if status && resp.Result.Reason != metav1.StatusReasonForbidden {
			t.Errorf("the status error's reason was lost: %+v", resp.Result)
		}
		for _, line := range logs.Lines() {
			if strings.Contains(line, secretToken) || strings.Contains(line, "hunter2") {
				t.Errorf("log line quotes a credential: %s", line)
			}
		}
	}

	var logs providertest.LogBuffer
	w, err := webhook.New(admission.HandlerFunc(echo), webhook.Options{Path: "/echo", Logger: logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Engage(t.Context(), "east", offlineCluster(t)); err != nil {
		t.Fatal(err)
	}
	review(t, serve(w), w.PathFor("east"), admissionv1.Create, configMap(nil))
	if _, err := logs.Find(`"Admitting"`, `"cluster"="east"`, `"path"="/echo"`); err != nil {
		t.Errorf("%v; lines: %q", err, logs.Lines())
	}
}

// The ready-made kcp resolver routes by the object's annotation, in the webhook's one path.
func TestResolverModeServesOnePath(t *testing.T) {
	w, err := webhook.New(admission.HandlerFunc(echo), webhook.Options{Path: "/kcp", ClusterResolver: webhook.KCPClusterResolver})
	if err != nil {
		t.Fatal(err)
	}
	if w.PerClusterPaths() || w.PathFor("root:org") != "/kcp" {
		t.Fatalf("a webhook with a resolver serves one path, not %s", w.PathFor("root:org"))
	}
	if err := w.Engage(t.Context(), "2x8zn3k5", offlineCluster(t)); err != nil {
		t.Fatal(err)
	}
	mux := serve(w)
	if resp := review(t, mux, "/kcp", admissionv1.Create, configMap(map[string]string{webhook.KCPClusterAnnotation: "2x8zn3k5"})); resp.Result.Message != "cluster=2x8zn3k5" {
		t.Errorf("annotated request: %+v", resp.Result)
	}
	if resp := review(t, mux, "/kcp", admissionv1.Delete, configMap(map[string]string{webhook.KCPClusterAnnotation: "2x8zn3k5"})); resp.Result.Message != "cluster=2x8zn3k5" {
		t.Errorf("DELETE, whose old object has the annotation: %+v", resp.Result)
	}
	resp := review(t, mux, "/kcp", admissionv1.Create, configMap(nil))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "cannot tell the cluster of the request") {
		t.Errorf("request without annotation: %+v", resp.Result)
	}
}

// A typed handler called without a Webhook says so instead of failing obscurely.
func TestTypedHandlerNeedsACluster(t *testing.T) {
	h := webhook.ValidatorHandler(clientgoscheme.Scheme, colorPolicy{})
	raw, err := json.Marshal(configMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	resp := h.Handle(t.Context(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: raw},
	}})
	if resp.Allowed || !strings.Contains(resp.Result.Message, "no cluster in the context") {
		t.Errorf("%+v", resp.Result)
	}
}

// Options are checked where they are given, with messages that say what to fix.
func TestOptionsAreChecked(t *testing.T) {
	handler := admission.HandlerFunc(echo)
	for _, tc := range []struct {
		opts webhook.Options
		want string
	}{
		{webhook.Options{}, "Options.Path is required"},
		{webhook.Options{Path: "validate"}, "must start with"},
		{webhook.Options{Path: "/validate/"}, "must not end with one"},
		{webhook.Options{Path: "/a//b"}, "must be clean"},
		{webhook.Options{Path: "/a/{cluster}"}, "only letters, digits"},
		{webhook.Options{Path: "/a", UnknownCluster: "Maybe"}, `unknown UnknownCluster policy "Maybe"`},
	} {
		if _, err := webhook.New(handler, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.opts, err, tc.want)
		}
	}
	if _, err := webhook.New(nil, webhook.Options{Path: "/a"}); err == nil {
		t.Error("New accepted a nil handler")
	}
}

// The builder wants exactly one handler, and names its paths after the type.
func TestBuilderNeedsOneHandler(t *testing.T) {
	mgr, err := mcmanager.New(fleet.Member("a").Config(), nil, mcmanager.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).Complete(); err == nil || !strings.Contains(err.Error(), "exactly one") {
		t.Errorf("no handler: %v", err)
	}
	if _, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).WithValidator(colorPolicy{}).WithDefaulter(clusterStamp{}).Complete(); err == nil {
		t.Error("two handlers: no error")
	}
	w, err := webhook.ManagedBy(mgr, &corev1.Secret{}).WithHandler(admission.HandlerFunc(echo)).Complete()
	if err != nil || w.Path() != "/admit--v1-secret" {
		t.Errorf("raw handler: %v, path %v", err, w)
	}
}
