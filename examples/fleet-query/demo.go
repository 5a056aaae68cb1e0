// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
)

const (
	// demoImage is the image the demo looks for.
	demoImage     = "registry.example/web:v1.2"
	demoNamespace = "shop"
)

// app is a Deployment of the demo: its name and image.
type app struct{ name, image string }

// demoApps are the Deployments of the demo's first, second and third member. The second has
// moved on to v1.3, except for its legacy Deployment.
var demoApps = [][]app{
	{{"web", demoImage}},
	{{"web", "registry.example/web:v1.3"}, {"web-legacy", demoImage}},
	{{"web", demoImage}},
}

// runDemo starts an embedded fleet of three clusters and runs the demo on it.
func runDemo(ctx context.Context, o options, out io.Writer) error {
	fmt.Fprintf(out, "Starting an embedded fleet of 3 clusters (kube-apiserver %s)...\n", envtest.KubernetesVersion)
	f, err := envtest.Start(ctx, envtest.Options{Members: []string{"fleet-a", "fleet-b", "fleet-c"}})
	if err != nil {
		return fmt.Errorf("starting the embedded fleet: %w", err)
	}
	defer func() { _ = f.Stop() }()
	return demo(ctx, f, o, out)
}

// demo seeds the first three members of f with Deployments, writes their kubeconfigs where the
// file provider finds them and asks which clusters run demoImage, once the third member's API
// server is stopped. With -watch it leaves every member up and follows them instead.
func demo(ctx context.Context, f *envtest.Fleet, o options, out io.Writer) error {
	members := f.Members()[:3]
	dir, err := os.MkdirTemp("", "mcr-fleet-query-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	fmt.Fprintf(out, "Created Deployments in namespace %s:\n", demoNamespace)
	for i, m := range members {
		// Admin credentials: readable by this user only.
		if err := os.WriteFile(filepath.Join(dir, m.Name()+".kubeconfig"), m.Kubeconfig(), 0o600); err != nil {
			return err
		}
		if err := create(ctx, m, demoApps[i], out); err != nil {
			return err
		}
	}
	o.fleet = dir + string(filepath.Separator)
	if o.image == "" {
		o.image = demoImage
	}
	if o.watch {
		fmt.Fprintf(out, "Change them in another shell, for example:\n  kubectl --kubeconfig %s -n %s set image deployment/web web=%s\n",
			filepath.Join(dir, members[1].Name()+".kubeconfig"), demoNamespace, o.image)
		return query(ctx, o, out)
	}
	stopped := members[2]
	o.beforeQuery = func(context.Context) error {
		fmt.Fprintf(out, "Every cluster is engaged. Stopping %s's API server, so that one cluster cannot answer.\n", stopped.Name())
		if err := stopped.Stop(); err != nil {
			return err
		}
		fmt.Fprintf(out, "Which clusters run %s?\n\n", o.image)
		return nil
	}
	return query(ctx, o, out)
}

// create creates the demo's namespace and the apps in m, and says so.
func create(ctx context.Context, m *envtest.Member, apps []app, out io.Writer) error {
	c, err := client.New(m.Config(), client.Options{})
	if err != nil {
		return err
	}
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace}}}
	var created []string
	for _, a := range apps {
		objs = append(objs, deployment(demoNamespace, a.name, a.image, nil))
		created = append(created, fmt.Sprintf("%s (%s)", a.name, a.image))
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s in %s: %w", obj.GetName(), m.Name(), err)
		}
	}
	fmt.Fprintf(out, "  %s: %s\n", m.Name(), strings.Join(created, ", "))
	return nil
}

// deployment returns a Deployment of one container running image.
func deployment(namespace, name, image string, labels map[string]string) *appsv1.Deployment {
	pod := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: pod},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: pod},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image}}},
			},
		},
	}
}
