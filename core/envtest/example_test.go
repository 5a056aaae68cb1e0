// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
)

// Start a fleet of two clusters, write to one of them, and take the other down and up again.
// In a test, envtest.StartForTest(t, "east", "west") does the same and stops the fleet when the
// test ends.
func Example() {
	ctx := context.Background()
	fleet, err := envtest.Start(ctx, envtest.Options{Members: []string{"east", "west"}})
	if err != nil {
		fmt.Println(err) // for example: binaries missing, run "make envtest"
		return
	}
	defer func() { _ = fleet.Stop() }()

	for _, m := range fleet.Members() {
		cs := kubernetes.NewForConfigOrDie(m.Config())
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(m.Name(), v.GitVersion)
	}

	east := kubernetes.NewForConfigOrDie(fleet.Member("east").Config())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "greeting"}, Data: map[string]string{"hello": "east"}}
	if _, err := east.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	// An outage of west: requests to it fail until it is started again, on the same address.
	west := fleet.Member("west")
	if err := west.Stop(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("west running:", west.Running())
	if err := west.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("west running:", west.Running())

	// Output:
	// east v1.37.2
	// west v1.37.2
	// west running: false
	// west running: true
}

// Hand a component limited credentials, as a provider would in a real fleet.
func ExampleMember_ServiceAccountKubeconfig() {
	ctx := context.Background()
	fleet, err := envtest.Start(ctx, envtest.Options{Members: []string{"east"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = fleet.Stop() }()

	// Default rules: read namespaces and configmaps, nothing else.
	kubeconfig, err := fleet.Member("east").ServiceAccountKubeconfig(ctx, envtest.ServiceAccountOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		fmt.Println(err)
		return
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	_, err = cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	fmt.Println("list configmaps allowed:", err == nil)
	_, err = cs.CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	fmt.Println("list secrets forbidden:", apierrors.IsForbidden(err))
	// Output:
	// list configmaps allowed: true
	// list secrets forbidden: true
}

// Give a member a kind of the test's own and create an object of it as soon as InstallCRDs
// returns: the member serves the kind by then.
func ExampleInstallCRDs() {
	ctx := context.Background()
	fleet, err := envtest.Start(ctx, envtest.Options{Members: []string{"east"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = fleet.Stop() }()

	c, err := client.New(fleet.Member("east").Config(), client.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	gvk := schema.GroupVersionKind{Group: "example.mcr.dev", Version: "v1", Kind: "Widget"}
	installCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := envtest.InstallCRDs(installCtx, c, envtest.SchemalessCRD(gvk, "widgets")); err != nil {
		fmt.Println(err)
		return
	}
	widget := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"color": "blue"}}}
	widget.SetGroupVersionKind(gvk)
	widget.SetNamespace("default")
	widget.SetName("first")
	if err := c.Create(ctx, widget); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created widget", widget.GetName())
}
