// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels on everything a Fleet of existing clusters creates.
const (
	// managedByLabel marks the suite's objects, so that a later run finds what an interrupted
	// one left behind.
	managedByLabel = "app.kubernetes.io/managed-by"
	managedByValue = "mcr-conformance"
	// runLabel names the run (one process) that created the object.
	runLabel = "conformance.mcr.dev/run"
)

// minMinorVersion is the oldest Kubernetes 1.x the suite supports on existing clusters: the
// members' credentials are bound ServiceAccount tokens from the TokenRequest API, and since
// 1.24 no long-lived token Secrets are created beside them.
const minMinorVersion = 24

// KubeconfigCluster names an existing cluster: a kubeconfig file and one of its contexts.
type KubeconfigCluster struct {
	// Path of the kubeconfig file. Default: the KUBECONFIG environment variable's files, or
	// ~/.kube/config, as kubectl loads them.
	Path string
	// Context to use. Default: the kubeconfig's current context.
	Context string
}

func (c KubeconfigCluster) String() string {
	path := c.Path
	if path == "" {
		path = "the default kubeconfig"
	}
	if c.Context == "" {
		return path + " (current context)"
	}
	return path + " context " + c.Context
}

// existingClusters is the state of a Fleet of existing clusters.
type existingClusters struct {
	run string

	closeOnce sync.Once
	closeErr  error
	stop      func() // stops the signal handling
}

// processRun names this process's run; every Fleet of existing clusters in it shares it, so
// that one Fleet's cleanup of earlier runs leaves the others of the process alone.
var processRun = sync.OnceValue(func() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%s", time.Now().UTC().Format("20060102t150405"), hex.EncodeToString(b))
})

// NewFleetFromKubeconfigs returns a Fleet over existing clusters (kind clusters, clusters of a
// cloud, anything a kubeconfig reaches) instead of envtest apiservers. The kubeconfigs' users
// must be cluster admins: the Fleet checks up front that each cluster runs Kubernetes 1.24 or
// later, serves the APIs it uses, and that the user may do what it does there, and returns one
// error naming everything missing.
//
// On each cluster the Fleet works in a namespace of its own, mcr-conformance-<run>, which
// holds the members' ServiceAccounts and the suite's marker objects; each member's
// ServiceAccount is bound to cluster-admin (a ClusterRoleBinding named after the namespace)
// while the member exists, and its credentials are tokens of it. Everything it creates
// carries the labels app.kubernetes.io/managed-by=mcr-conformance and
// conformance.mcr.dev/run=<run>.
//
// Close removes all of it. It also runs when ctx ends and when the process gets SIGINT or
// SIGTERM (the signal is then delivered again, so the process ends as it would have). What a
// killed process leaves behind, the next Fleet on that cluster removes when it starts. So do
// not run two suites against one cluster at the same time.
func NewFleetFromKubeconfigs(ctx context.Context, clusters ...KubeconfigCluster) (*Fleet, error) {
	if len(clusters) == 0 {
		return nil, errors.New("conformance: NewFleetFromKubeconfigs needs at least one cluster")
	}
	run := processRun()
	f := &Fleet{
		namespace: "mcr-conformance-" + run,
		existing:  &existingClusters{run: run},
		members:   map[string]*FleetMember{},
	}
	var problems []error
	for _, c := range clusters {
		s, err := loadCluster(c)
		if err == nil {
			err = preflight(ctx, s)
		}
		if err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", c, err))
			continue
		}
		f.servers = append(f.servers, s)
	}
	if err := errors.Join(problems...); err != nil {
		return nil, fmt.Errorf("conformance: the clusters cannot hold a conformance run:\n%w", err)
	}
	for _, s := range f.servers {
		if err := f.removeLeftovers(ctx, s, func(run string) bool { return run != f.existing.run }); err != nil {
			return nil, fmt.Errorf("conformance: %s: removing what earlier runs left: %w", s.name, err)
		}
	}
	f.closeOnInterrupt(ctx)
	return f, nil
}

// loadCluster reads a kubeconfig as kubectl does.
func loadCluster(c KubeconfigCluster) (*fleetServer, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.Path != "" {
		rules.ExplicitPath = c.Path
	}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: c.Context})
	config, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	name := c.Context
	if name == "" {
		raw, err := loader.RawConfig()
		if err != nil {
			return nil, fmt.Errorf("loading the kubeconfig: %w", err)
		}
		name = raw.CurrentContext
	}
	return &fleetServer{name: name, config: config, key: "kubeconfig " + c.String()}, nil
}

// preflight checks the cluster's version, APIs and the user's permissions, and returns one
// error listing every problem.
func preflight(ctx context.Context, s *fleetServer) error {
	dc, err := discovery.NewDiscoveryClientForConfig(s.config)
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		return fmt.Errorf("cannot reach the cluster at %s: %w", s.config.Host, err)
	}
	var problems []string
	minor, _ := strconv.Atoi(strings.TrimRight(v.Minor, "+"))
	if v.Major != "1" || minor < minMinorVersion {
		problems = append(problems, fmt.Sprintf("Kubernetes %s.%s: the suite needs 1.%d or later (bound ServiceAccount tokens)", v.Major, v.Minor, minMinorVersion))
	}
	for gv, resources := range map[string][]string{
		"v1":                           {"namespaces", "serviceaccounts", "serviceaccounts/token", "secrets", "configmaps"},
		"rbac.authorization.k8s.io/v1": {"clusterrolebindings"},
		"authorization.k8s.io/v1":      {"selfsubjectaccessreviews"},
	} {
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			problems = append(problems, fmt.Sprintf("API %s is not served: %v", gv, err))
			continue
		}
		for _, r := range resources {
			if !slices.ContainsFunc(list.APIResources, func(a metav1.APIResource) bool { return a.Name == r }) {
				problems = append(problems, fmt.Sprintf("API %s has no resource %s", gv, r))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	c, err := adminClient(s)
	if err != nil {
		return err
	}
	var denied []string
	for _, a := range requiredAccess {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &a}}
		if err := c.Create(ctx, review); err != nil {
			return fmt.Errorf("checking the permissions of the kubeconfig's user: %w", err)
		}
		if !review.Status.Allowed {
			denied = append(denied, describeAccess(a))
		}
	}
	if len(denied) > 0 {
		return fmt.Errorf("the kubeconfig's user may not %s (the suite needs a cluster admin: it binds the members' ServiceAccounts to cluster-admin)", strings.Join(denied, ", "))
	}
	return nil
}

// requiredAccess is what a Fleet does on an existing cluster, cluster-wide.
var requiredAccess = []authorizationv1.ResourceAttributes{
	{Verb: "create", Resource: "namespaces"},
	{Verb: "delete", Resource: "namespaces"},
	{Verb: "list", Resource: "namespaces"},
	{Verb: "create", Resource: "serviceaccounts"},
	{Verb: "delete", Resource: "serviceaccounts"},
	{Verb: "list", Resource: "serviceaccounts"},
	{Verb: "create", Resource: "serviceaccounts", Subresource: "token"},
	// Each token is bound to a Secret: deleting it revokes the token (a rotation's revokeOld).
	{Verb: "create", Resource: "secrets"},
	{Verb: "delete", Resource: "secrets"},
	{Verb: "list", Resource: "secrets"},
	{Verb: "create", Group: rbacv1.GroupName, Resource: "clusterrolebindings"},
	{Verb: "delete", Group: rbacv1.GroupName, Resource: "clusterrolebindings"},
	{Verb: "list", Group: rbacv1.GroupName, Resource: "clusterrolebindings"},
	{Verb: "bind", Group: rbacv1.GroupName, Resource: "clusterroles", Name: "cluster-admin"},
	{Verb: "create", Resource: "configmaps"},
	{Verb: "delete", Resource: "configmaps"},
}

func describeAccess(a authorizationv1.ResourceAttributes) string {
	r := a.Resource
	if a.Subresource != "" {
		r += "/" + a.Subresource
	}
	if a.Group != "" {
		r += "." + a.Group
	}
	if a.Name != "" {
		r += " " + a.Name
	}
	return a.Verb + " " + r
}

// removeLeftovers deletes the suite's objects on the cluster whose run label matches.
func (f *Fleet) removeLeftovers(ctx context.Context, s *fleetServer, matches func(run string) bool) error {
	c, err := adminClient(s)
	if err != nil {
		return err
	}
	ours := client.HasLabels{managedByLabel}
	var errs []error
	del := func(o client.Object) {
		if !matches(o.GetLabels()[runLabel]) || o.GetLabels()[managedByLabel] != managedByValue {
			return
		}
		if err := c.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %T %s: %w", o, client.ObjectKeyFromObject(o), err))
		}
	}
	var bindings rbacv1.ClusterRoleBindingList
	if err := c.List(ctx, &bindings, ours); err != nil {
		return fmt.Errorf("listing cluster role bindings: %w", err)
	}
	for i := range bindings.Items {
		del(&bindings.Items[i])
	}
	var namespaces corev1.NamespaceList
	if err := c.List(ctx, &namespaces, ours); err != nil {
		return fmt.Errorf("listing namespaces: %w", err)
	}
	for i := range namespaces.Items {
		ns := &namespaces.Items[i]
		if !matches(ns.Labels[runLabel]) || ns.Labels[managedByLabel] != managedByValue {
			continue
		}
		// The ServiceAccounts first: their tokens stop working at once, also where no
		// namespace controller empties the namespace (envtest).
		var accounts corev1.ServiceAccountList
		if err := c.List(ctx, &accounts, client.InNamespace(ns.Name), ours); err != nil {
			errs = append(errs, fmt.Errorf("listing service accounts in %s: %w", ns.Name, err))
		}
		for i := range accounts.Items {
			del(&accounts.Items[i])
		}
		// Also where no namespace controller deletes what the namespace held (envtest).
		var secrets corev1.SecretList
		if err := c.List(ctx, &secrets, client.InNamespace(ns.Name), ours); err != nil {
			errs = append(errs, fmt.Errorf("listing Secrets in %s: %w", ns.Name, err))
		}
		for i := range secrets.Items {
			del(&secrets.Items[i])
		}
		del(ns)
		createdNamespaces.Delete([2]string{s.config.Host, ns.Name})
	}
	return errors.Join(errs...)
}

// Close removes everything the Fleet created on existing clusters; on a Fleet of envtest
// apiservers it does nothing. It is safe to call more than once and returns the first
// call's result.
func (f *Fleet) Close(ctx context.Context) error {
	e := f.existing
	if e == nil {
		return nil
	}
	e.closeOnce.Do(func() {
		if e.stop != nil {
			e.stop()
		}
		var errs []error
		for _, s := range f.servers {
			if err := f.removeLeftovers(ctx, s, func(run string) bool { return run == e.run }); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
			}
		}
		f.mu.Lock()
		for _, m := range f.members {
			serverLoad.Lock()
			serverLoad.n[m.server.config.Host]--
			serverLoad.Unlock()
		}
		f.members = map[string]*FleetMember{}
		f.mu.Unlock()
		if err := errors.Join(errs...); err != nil {
			e.closeErr = fmt.Errorf("conformance: cleaning up the clusters: %w", err)
		}
	})
	return e.closeErr
}

// cleanupTimeout bounds the cleanup after ctx ended or a signal came.
const cleanupTimeout = time.Minute

// closeOnInterrupt closes the Fleet when ctx ends or the process gets SIGINT or SIGTERM; after
// a signal it delivers the signal again, with Go's default handling restored.
func (f *Fleet) closeOnInterrupt(ctx context.Context) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var once sync.Once
	f.existing.stop = func() {
		once.Do(func() {
			signal.Stop(signals)
			close(done)
		})
	}
	go func() {
		select {
		case sig := <-signals:
			cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			if err := f.Close(cleanupCtx); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
			cancel()
			signal.Reset(sig)
			if p, err := os.FindProcess(os.Getpid()); err == nil {
				_ = p.Signal(sig)
			}
		case <-ctx.Done():
			cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			_ = f.Close(cleanupCtx)
			cancel()
		case <-done:
		}
	}()
}
