// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command webhook serves one validating admission webhook for a whole fleet: a ConfigMap whose
// "color" the policy of its namespace forbids is refused, and the policy is read in the member
// the request came from, so the same ConfigMap is allowed in one cluster and refused in another.
//
// It starts an embedded fleet of three clusters (real kube-apiservers, see
// mcr.dev/core/envtest), gives each a different policy (the ConfigMap shop/color-policy), runs a
// manager whose webhook server listens on 127.0.0.1 with a certificate minted for the demo,
// registers the webhook's configuration in every member (each member calls its own path), then
// tries to create a red and a blue ConfigMap in every member and prints what each member
// decided. It removes the configurations and exits; -print-config prints them first.
//
//	go run ./webhook
//	go run ./webhook -print-config
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	"sigs.k8s.io/yaml"

	mcr "mcr.dev/core"
	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/clusters"
	"mcr.dev/core/webhook"
)

const (
	namespace = "shop"
	// policyName is the ConfigMap of each member's namespace whose "forbidden" key names the
	// color that member refuses.
	policyName = "color-policy"
)

// policies are the members of the embedded fleet and the color each forbids ("" for none).
var policies = map[string]string{"fleet-a": "red", "fleet-b": "blue", "fleet-c": ""}

func main() {
	if err := runCommand(mcr.SetupSignalHandler(), os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "webhook demo failed:", err)
		os.Exit(1)
	}
}

// runCommand parses the command line and runs the demo.
func runCommand(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("webhook", flag.ContinueOnError)
	printConfig := fs.Bool("print-config", false, "print the webhook configuration rendered for each member")
	timeout := fs.Duration("timeout", 3*time.Minute, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	return run(ctx, *printConfig, out)
}

// snippet:begin webhook-policy

// colorPolicy refuses a ConfigMap whose "color" the policy of its namespace forbids, reading
// the policy in the cluster the request came from.
type colorPolicy struct{}

func (colorPolicy) ValidateCreate(ctx context.Context, name mcr.ClusterName, cl cluster.Cluster, cm *corev1.ConfigMap) (admission.Warnings, error) {
	policy := &corev1.ConfigMap{}
	err := cl.GetClient().Get(ctx, client.ObjectKey{Namespace: cm.Namespace, Name: policyName}, policy)
	if apierrors.IsNotFound(err) {
		return admission.Warnings{fmt.Sprintf("checked in cluster %s: no policy", name)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the color policy of cluster %s: %w", name, err)
	}
	if color := cm.Data["color"]; color != "" && color == policy.Data["forbidden"] {
		return nil, fmt.Errorf("color %s is forbidden in cluster %s by %s/%s", color, name, cm.Namespace, policyName)
	}
	return admission.Warnings{fmt.Sprintf("checked in cluster %s", name)}, nil
}

func (p colorPolicy) ValidateUpdate(ctx context.Context, name mcr.ClusterName, cl cluster.Cluster, _, cm *corev1.ConfigMap) (admission.Warnings, error) {
	return p.ValidateCreate(ctx, name, cl, cm)
}

func (colorPolicy) ValidateDelete(context.Context, mcr.ClusterName, cluster.Cluster, *corev1.ConfigMap) (admission.Warnings, error) {
	return nil, nil
}

// snippet:end webhook-policy

// run starts the fleet and the webhook, registers it in every member, tries a red and a blue
// ConfigMap in each and prints the decisions; it fails unless each member decided as its own
// policy says.
func run(ctx context.Context, printConfig bool, out io.Writer) error {
	fleet, members, err := startFleet(ctx, out)
	if err != nil {
		return err
	}
	defer func() { _ = fleet.Stop() }()
	dir, err := os.MkdirTemp("", "mcr-webhook-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// A serving certificate for 127.0.0.1, where the members call the server; its CA goes into
	// every member's webhook configuration.
	endpoint, err := envtest.NewWebhookEndpoint(dir)
	if err != nil {
		return err
	}

	// The manager runs in the first member; the provider engages all three.
	provider := clusters.New()
	for _, m := range fleet.Members() {
		cl, err := cluster.New(m.Config())
		if err != nil {
			return err
		}
		if err := provider.Add(ctx, mcr.ClusterName(m.Name()), cl); err != nil {
			return err
		}
	}
	mgr, err := mcr.NewManager(fleet.Members()[0].Config(), provider, mcr.Options{
		WebhookServer:          ctrlwebhook.NewServer(endpoint.ServerOptions()),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	// snippet:begin webhook-register
	// Served at /validate--v1-configmap/<cluster> for every cluster the manager engages.
	hook, err := webhook.ManagedBy(mgr, &corev1.ConfigMap{}).
		WithValidator(colorPolicy{}).
		Complete()
	// snippet:end webhook-register
	if err != nil {
		return err
	}

	mgrCtx, stopManager := context.WithCancel(ctx)
	defer stopManager()
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	if err := waitForServer(ctx, mgr, hook, len(members), mgrDone); err != nil {
		return err
	}

	cfg := configuration(hook, endpoint)
	// Whatever happens, the members do not keep calling a server that is gone.
	var registered []*member
	unregister := func() {
		for _, m := range registered {
			if err := cfg.Remove(context.WithoutCancel(ctx), mcr.ClusterName(m.name), m.client); err != nil {
				fmt.Fprintln(out, "warning:", err)
			}
		}
		registered = nil
	}
	defer unregister()
	for _, m := range members {
		if printConfig {
			if err := printConfiguration(out, cfg, m.name); err != nil {
				return err
			}
		}
		if err := registerIn(ctx, mgr, cfg, m.name); err != nil {
			return err
		}
		registered = append(registered, m)
		fmt.Fprintf(out, "Registered the webhook in %s: it calls %s%s\n", m.name, endpoint.URL(), hook.PathFor(mcr.ClusterName(m.name)))
	}
	for _, m := range members {
		if err := m.waitForWebhook(ctx); err != nil {
			return err
		}
	}

	fmt.Fprintln(out, "\nThe same two ConfigMaps in every member; each member's own policy decides:")
	var wrong []string
	for _, m := range members {
		for _, color := range []string{"red", "blue"} {
			decision, err := m.tryColor(ctx, color)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "  %-8s %-5s %s\n", m.name, color, decision)
			if forbidden := policies[m.name] == color; forbidden != strings.HasPrefix(decision, "denied") {
				wrong = append(wrong, m.name+"/"+color)
			}
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("members decided against their policy: %v", wrong)
	}

	unregister()
	fmt.Fprintln(out, "\nRemoved the webhook configurations.")
	stopManager()
	if err := <-mgrDone; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	fmt.Fprintln(out, "\nDone.")
	return nil
}

// configuration is the webhook configuration of the fleet: the members reach the server at the
// endpoint's URL and trust its CA; each calls its own path.
func configuration(hook *webhook.Webhook, endpoint *envtest.WebhookEndpoint) webhook.Configuration {
	// snippet:begin webhook-configuration
	return webhook.Configuration{
		Name:     "color-policy.examples.mcr.dev",
		Endpoint: webhook.Endpoint{URL: endpoint.URL(), CABundle: endpoint.CABundle},
		Validating: []webhook.ValidatingHook{{
			Webhook: hook,
			ValidatingWebhook: admissionregistrationv1.ValidatingWebhook{
				Name: "color-policy.examples.mcr.dev",
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}},
				// Only the demo's namespace: the webhook never stands in the way of the system.
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: namespace}},
				FailurePolicy:     ptr.To(admissionregistrationv1.Fail),
			},
		}},
	}
	// snippet:end webhook-configuration
}

// registerIn applies the configuration in the named member, through the member's client.
func registerIn(ctx context.Context, mgr mcr.Manager, cfg webhook.Configuration, name string) error {
	// snippet:begin webhook-apply
	cl, err := mgr.GetCluster(ctx, mcr.ClusterName(name))
	if err != nil {
		return err
	}
	// Server-side apply: applying it again changes nothing.
	return cfg.Apply(ctx, mcr.ClusterName(name), cl.GetClient())
	// snippet:end webhook-apply
}

func printConfiguration(out io.Writer, cfg webhook.Configuration, name string) error {
	rendered, err := cfg.RenderValidating(mcr.ClusterName(name))
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(rendered)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "# the webhook configuration of %s\n%s---\n", name, data)
	return nil
}

// waitForServer returns once the webhook server answers and the webhook serves every member.
func waitForServer(ctx context.Context, mgr mcr.Manager, hook *webhook.Webhook, members int, mgrDone <-chan error) error {
	started := mgr.GetWebhookServer().StartedChecker()
	for started(nil) != nil || len(hook.Clusters()) < members {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the webhook server: %w", ctx.Err())
		case err := <-mgrDone:
			return fmt.Errorf("manager stopped early: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// member is a client of one member of the embedded fleet, as a user of that cluster would
// have, with the warnings its API server returned.
type member struct {
	name   string
	client client.Client

	mu       sync.Mutex
	warnings []string
}

func (m *member) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.warnings = append(m.warnings, text)
}

func (m *member) takeWarnings() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.warnings
	m.warnings = nil
	return w
}

// startFleet starts the embedded fleet and seeds each member's namespace and policy.
func startFleet(ctx context.Context, out io.Writer) (*envtest.Fleet, []*member, error) {
	fmt.Fprintf(out, "Starting an embedded fleet of %d clusters (kube-apiserver %s)...\n", len(policies), envtest.KubernetesVersion)
	fleet, err := envtest.Start(ctx, envtest.Options{Members: []string{"fleet-a", "fleet-b", "fleet-c"}})
	if err != nil {
		return nil, nil, err
	}
	var members []*member
	for _, fm := range fleet.Members() {
		m := &member{name: fm.Name()}
		cfg := rest.CopyConfig(fm.Config())
		cfg.WarningHandlerWithContext = m
		if m.client, err = client.New(cfg, client.Options{}); err != nil {
			return nil, nil, errors.Join(err, fleet.Stop())
		}
		if err := seed(ctx, m); err != nil {
			return nil, nil, errors.Join(err, fleet.Stop())
		}
		members = append(members, m)
		if color := policies[m.name]; color != "" {
			fmt.Fprintf(out, "  %s forbids %s\n", m.name, color)
		} else {
			fmt.Fprintf(out, "  %s has no policy\n", m.name)
		}
	}
	return fleet, members, nil
}

// seed creates the namespace and, where the member has one, its policy.
func seed(ctx context.Context, m *member) error {
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}}
	if color := policies[m.name]; color != "" {
		objs = append(objs, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: policyName},
			Data:       map[string]string{"forbidden": color},
		})
	}
	for _, obj := range objs {
		if err := m.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("seeding %s: %w", m.name, err)
		}
	}
	return nil
}

// waitForWebhook returns once the member's API server calls the webhook: a new configuration
// takes it a moment to see. A dry run is enough, and creates nothing.
func (m *member) waitForWebhook(ctx context.Context) error {
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "probe"}}
	for {
		m.takeWarnings()
		if err := m.client.Create(ctx, probe.DeepCopy(), client.DryRunAll); err != nil {
			return fmt.Errorf("probing the webhook in %s: %w", m.name, err)
		}
		for _, w := range m.takeWarnings() {
			if strings.HasPrefix(w, "checked in cluster "+m.name) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s does not call the webhook: %w", m.name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tryColor creates a ConfigMap of that color and returns what the member decided.
func (m *member) tryColor(ctx context.Context, color string) (string, error) {
	m.takeWarnings()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "paint-" + color},
		Data:       map[string]string{"color": color},
	}
	err := m.client.Create(ctx, cm)
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) {
		_, reason, _ := strings.Cut(err.Error(), "denied the request: ")
		return "denied: " + reason, nil
	}
	if err != nil {
		return "", fmt.Errorf("creating a %s ConfigMap in %s: %w", color, m.name, err)
	}
	return fmt.Sprintf("allowed (%s)", strings.Join(m.takeWarnings(), "; ")), nil
}
