// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook_test

import (
	"context"
	"fmt"
	"os"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/nop"
	"mcr.dev/core/webhook"
)

// quotaPolicy refuses a ConfigMap bigger than the limit that the ConfigMap "quota" of its
// namespace sets, read in the cluster the request came from.
type quotaPolicy struct{}

func (quotaPolicy) ValidateCreate(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, cm *corev1.ConfigMap) (admission.Warnings, error) {
	quota := &corev1.ConfigMap{}
	err := cl.GetClient().Get(ctx, client.ObjectKey{Namespace: cm.Namespace, Name: "quota"}, quota)
	if apierrors.IsNotFound(err) {
		return nil, nil // no quota in this cluster
	}
	if err != nil {
		return nil, fmt.Errorf("reading the quota of cluster %s: %w", name, err)
	}
	limit, err := strconv.Atoi(quota.Data["maxKeys"])
	if err != nil {
		return nil, fmt.Errorf("the quota of cluster %s: maxKeys: %w", name, err)
	}
	if len(cm.Data) > limit {
		return nil, fmt.Errorf("cluster %s allows at most %d keys per ConfigMap", name, limit)
	}
	return nil, nil
}

func (p quotaPolicy) ValidateUpdate(ctx context.Context, name multicluster.ClusterName, cl cluster.Cluster, _, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return p.ValidateCreate(ctx, name, cl, cm)
}

func (quotaPolicy) ValidateDelete(context.Context, multicluster.ClusterName, cluster.Cluster, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

// A validating webhook for ConfigMaps, served for every cluster the manager engages, each at a
// path of its own.
func Example() {
	if err := addQuotaWebhook(managerFromSomewhere()); err != nil {
		os.Exit(1)
	}
}

func addQuotaWebhook(mgr mcmanager.Manager) error {
	hook, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).
		WithValidator(quotaPolicy{}).
		Complete()
	if err != nil {
		return err
	}
	// Served at /validate--v1-configmap/<cluster> for each engaged cluster.
	fmt.Println(hook.PathFor("east"))
	return nil
}

// On kcp, every workspace calls one path; the workspace's logical cluster comes from the
// kcp.io/cluster annotation kcp sets on the object.
func ExampleKCPClusterResolver() {
	if err := addKCPWebhook(managerFromSomewhere()); err != nil {
		os.Exit(1)
	}
}

func addKCPWebhook(mgr mcmanager.Manager) error {
	_, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).
		WithValidator(quotaPolicy{}).
		WithOptions(webhook.Options{
			Path:            "/validate-configmaps",
			ClusterResolver: webhook.KCPClusterResolver,
			// A workspace the provider has not engaged yet is not blocked.
			UnknownCluster: webhook.AllowUnknownCluster,
		}).
		Complete()
	return err
}

// The configuration registered in each member points at that member's path, with the CA of
// the server's certificate. Apply writes it with server-side apply; Remove deletes it.
func ExampleConfiguration() {
	hook, err := webhook.New(webhook.ValidatorHandler(clientgoscheme.Scheme, quotaPolicy{}), webhook.Options{Path: "/validate-configmaps"})
	if err != nil {
		panic(err)
	}
	cfg := quotaConfiguration(hook, []byte("-----BEGIN CERTIFICATE-----..."))
	for _, name := range []multicluster.ClusterName{"east", "team/west"} {
		rendered, err := cfg.RenderValidating(name)
		if err != nil {
			panic(err)
		}
		fmt.Println(name, *rendered.Webhooks[0].ClientConfig.URL)
	}
	// Output:
	// east https://webhooks.example.com:9443/validate-configmaps/east
	// team/west https://webhooks.example.com:9443/validate-configmaps/team~2Fwest
}

func quotaConfiguration(hook *webhook.Webhook, caBundle []byte) webhook.Configuration {
	return webhook.Configuration{
		Name:     "configmap-quota",
		Endpoint: webhook.Endpoint{URL: "https://webhooks.example.com:9443", CABundle: caBundle},
		Validating: []webhook.ValidatingHook{{
			Webhook: hook,
			ValidatingWebhook: admissionregistrationv1.ValidatingWebhook{
				Name: "quota.configmaps.example.com",
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}},
				FailurePolicy: ptr.To(admissionregistrationv1.Fail),
				// SideEffects (None) and AdmissionReviewVersions (v1) are defaulted.
			},
		}},
	}
}

// Apply the configuration in every member the manager engages, for example from a runnable
// after the webhook server started.
func ExampleConfiguration_Apply() {
	mgr := managerFromSomewhere()
	hook, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).WithValidator(quotaPolicy{}).Complete()
	if err != nil {
		os.Exit(1)
	}
	if err := applyEverywhere(context.Background(), mgr, quotaConfiguration(hook, []byte("..."))); err != nil {
		os.Exit(1)
	}
}

func applyEverywhere(ctx context.Context, mgr mcmanager.Manager, cfg webhook.Configuration) error {
	for _, name := range mgr.EngagedClusters() {
		cl, err := mgr.GetCluster(ctx, name)
		if err != nil {
			return err
		}
		if err := cfg.Apply(ctx, name, cl.GetClient()); err != nil {
			return err
		}
	}
	return nil
}

// The path of each cluster, for configurations written by hand (Helm charts, kustomize).
func ExampleClusterPath() {
	fmt.Println(webhook.ClusterPath("/validate-configmaps", "fleet-a"))
	fmt.Println(webhook.ClusterPath("/validate-configmaps", "team/east"))
	fmt.Println(webhook.ClusterPath("/validate-configmaps", "")) // the local cluster
	// Output:
	// /validate-configmaps/fleet-a
	// /validate-configmaps/team~2Feast
	// /validate-configmaps
}

func managerFromSomewhere() mcmanager.Manager {
	mgr, err := mcmanager.New(ctrl.GetConfigOrDie(), nop.New(), mcmanager.Options{})
	if err != nil {
		os.Exit(1)
	}
	return mgr
}
