// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/redact"
)

// Endpoint says how members reach the webhook server. Set exactly one of URL and Service.
type Endpoint struct {
	// URL is the server's https URL as members reach it, e.g. https://webhooks.example.com:9443
	// (or https://127.0.0.1:<port> for members on the same machine, as in tests). The webhook's
	// path for each member is appended to it, after any path it has.
	URL string

	// Service is a Service in each member that leads to the server (the local cluster's own
	// Service, or one whose endpoints or ExternalName reach the server from a member). The
	// webhook's path for each member is appended to its Path, if any.
	Service *admissionregistrationv1.ServiceReference

	// CABundle is the PEM certificate of the CA that signed the server's certificate.
	CABundle []byte
}

// ValidatingHook is one webhook of a ValidatingWebhookConfiguration: the Webhook that serves
// it, and the rest of the entry (name, rules, selectors, failure policy, ...), whose
// ClientConfig is filled in per member.
type ValidatingHook struct {
	Webhook *Webhook
	admissionregistrationv1.ValidatingWebhook
}

// MutatingHook is one webhook of a MutatingWebhookConfiguration, as ValidatingHook is for
// validating ones.
type MutatingHook struct {
	Webhook *Webhook
	admissionregistrationv1.MutatingWebhook
}

// Configuration is the webhook configuration of the fleet: in each member, a
// ValidatingWebhookConfiguration (when there are Validating hooks) and a
// MutatingWebhookConfiguration (when there are Mutating hooks), both named Name, whose webhooks
// call the server at the path for that member.
//
// Defaults, applied to what is rendered: each hook's SideEffects is None and its
// AdmissionReviewVersions are ["v1"] unless set (the API server requires both); FieldOwner is
// "mcr-webhook".
type Configuration struct {
	// Name of the configuration objects in every member. Required.
	Name string
	// Labels of the configuration objects. Default: none.
	Labels map[string]string
	// Endpoint is how members reach the server. Required.
	Endpoint Endpoint
	// Validating webhooks, in this order.
	Validating []ValidatingHook
	// Mutating webhooks, in this order.
	Mutating []MutatingHook
	// FieldOwner is the field manager of Apply's server-side apply.
	FieldOwner string
}

// DefaultFieldOwner is Configuration.FieldOwner unless set.
const DefaultFieldOwner = "mcr-webhook"

// withDefaults returns c with its defaults applied (on copies of the hooks), or why it is not
// valid. It is the only place defaults are decided.
func (c Configuration) withDefaults() (Configuration, error) {
	if c.Name == "" {
		return c, errors.New("webhook configuration: Name is required")
	}
	if (c.Endpoint.URL == "") == (c.Endpoint.Service == nil) {
		return c, fmt.Errorf("webhook configuration %s: set exactly one of Endpoint.URL and Endpoint.Service", c.Name)
	}
	if c.Endpoint.URL != "" {
		u, err := url.Parse(c.Endpoint.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			// Not quoted: a URL that is not what we expect may carry credentials.
			return c, fmt.Errorf("webhook configuration %s: Endpoint.URL must be https://host[:port][/path], without user, query or fragment", c.Name)
		}
	}
	if c.FieldOwner == "" {
		c.FieldOwner = DefaultFieldOwner
	}
	none := admissionregistrationv1.SideEffectClassNone
	c.Validating = append([]ValidatingHook(nil), c.Validating...)
	for i := range c.Validating {
		h := &c.Validating[i]
		if h.Webhook == nil || h.Name == "" {
			return c, fmt.Errorf("webhook configuration %s: validating hook %d needs a Webhook and a Name", c.Name, i)
		}
		if h.SideEffects == nil {
			h.SideEffects = &none
		}
		if len(h.AdmissionReviewVersions) == 0 {
			h.AdmissionReviewVersions = []string{"v1"}
		}
	}
	c.Mutating = append([]MutatingHook(nil), c.Mutating...)
	for i := range c.Mutating {
		h := &c.Mutating[i]
		if h.Webhook == nil || h.Name == "" {
			return c, fmt.Errorf("webhook configuration %s: mutating hook %d needs a Webhook and a Name", c.Name, i)
		}
		if h.SideEffects == nil {
			h.SideEffects = &none
		}
		if len(h.AdmissionReviewVersions) == 0 {
			h.AdmissionReviewVersions = []string{"v1"}
		}
	}
	return c, nil
}

// clientConfig is how cluster name calls w.
func (e Endpoint) clientConfig(w *Webhook, name multicluster.ClusterName) admissionregistrationv1.WebhookClientConfig {
	p := w.PathFor(name)
	cc := admissionregistrationv1.WebhookClientConfig{CABundle: e.CABundle}
	if e.Service != nil {
		svc := *e.Service
		prefix := ""
		if svc.Path != nil {
			prefix = strings.TrimSuffix(*svc.Path, "/")
		}
		full := prefix + p
		svc.Path = &full
		cc.Service = &svc
		return cc
	}
	full := strings.TrimSuffix(e.URL, "/") + p
	cc.URL = &full
	return cc
}

// RenderValidating returns the ValidatingWebhookConfiguration for cluster name, or nil when
// there are no Validating hooks.
func (c Configuration) RenderValidating(name multicluster.ClusterName) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	c, err := c.withDefaults()
	if err != nil || len(c.Validating) == 0 {
		return nil, err
	}
	return c.validating(name), nil
}

// RenderMutating returns the MutatingWebhookConfiguration for cluster name, or nil when there
// are no Mutating hooks.
func (c Configuration) RenderMutating(name multicluster.ClusterName) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	c, err := c.withDefaults()
	if err != nil || len(c.Mutating) == 0 {
		return nil, err
	}
	return c.mutating(name), nil
}

func (c Configuration) validating(name multicluster.ClusterName) *admissionregistrationv1.ValidatingWebhookConfiguration {
	obj := &admissionregistrationv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: c.Labels},
	}
	for _, h := range c.Validating {
		entry := *h.DeepCopy() // the entry, without the Webhook
		entry.ClientConfig = c.Endpoint.clientConfig(h.Webhook, name)
		obj.Webhooks = append(obj.Webhooks, entry)
	}
	return obj
}

func (c Configuration) mutating(name multicluster.ClusterName) *admissionregistrationv1.MutatingWebhookConfiguration {
	obj := &admissionregistrationv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: c.Labels},
	}
	for _, h := range c.Mutating {
		entry := *h.DeepCopy()
		entry.ClientConfig = c.Endpoint.clientConfig(h.Webhook, name)
		obj.Webhooks = append(obj.Webhooks, entry)
	}
	return obj
}

// Apply creates or updates, by server-side apply, the configuration objects for cluster name
// through c, the client of that cluster. Applying the same configuration again changes nothing;
// webhooks removed from the Configuration are removed from the objects.
func (c Configuration) Apply(ctx context.Context, name multicluster.ClusterName, cl client.Client) error {
	c, err := c.withDefaults()
	if err != nil {
		return err
	}
	var objs []runtime.Object
	if len(c.Validating) > 0 {
		objs = append(objs, c.validating(name))
	}
	if len(c.Mutating) > 0 {
		objs = append(objs, c.mutating(name))
	}
	for _, obj := range objs {
		kind := obj.GetObjectKind().GroupVersionKind().Kind
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return fmt.Errorf("rendering %s %s for cluster %q: %w", kind, c.Name, name, err)
		}
		u := &unstructured.Unstructured{Object: content}
		// A typed object's zero creationTimestamp converts to null, which apply would own.
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		if err := cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(c.FieldOwner), client.ForceOwnership); err != nil {
			return redact.Error(fmt.Errorf("applying %s %s in cluster %q: %w", kind, c.Name, name, err))
		}
	}
	return nil
}

// Remove deletes the configuration objects Apply makes from cluster name, through c, the client
// of that cluster; objects already gone are no error.
func (c Configuration) Remove(ctx context.Context, name multicluster.ClusterName, cl client.Client) error {
	if c.Name == "" {
		return errors.New("webhook configuration: Name is required")
	}
	type named struct {
		kind string
		obj  client.Object
	}
	var objs []named
	if len(c.Validating) > 0 {
		objs = append(objs, named{"ValidatingWebhookConfiguration", &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: c.Name}}})
	}
	if len(c.Mutating) > 0 {
		objs = append(objs, named{"MutatingWebhookConfiguration", &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: c.Name}}})
	}
	for _, o := range objs {
		if err := cl.Delete(ctx, o.obj); err != nil && !apierrors.IsNotFound(err) {
			return redact.Error(fmt.Errorf("removing %s %s from cluster %q: %w", o.kind, c.Name, name, err))
		}
	}
	return nil
}
