// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file_test

import (
	"context"
	"flag"
	"fmt"
	"log"

	corev1 "k8s.io/api/core/v1"

	mcr "mcr.dev/core"
	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/file"
)

// Run a controller over every context of the kubeconfig files in a directory (a mounted Secret,
// say). The manager starts the provider; clusters come and go with the files.
func Example() {
	provider, err := file.New(file.Options{Dirs: []string{"/etc/mcr/fleet"}})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcr.NewManager(mcr.GetConfigOrDie(), provider, mcr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	err = mcr.NewControllerManagedBy(mgr).
		Named("configmaps").
		For(&corev1.ConfigMap{}).
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			// req.ClusterName is e.g. "east.kubeconfig+east" (see Provider.ClusterName).
			mcr.LoggerFrom(ctx).Info("Reconciling", "cluster", req.ClusterName, "configmap", req.NamespacedName)
			return mcr.Result{}, nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		log.Fatal(err)
	}
}

// Cluster names are <file>+<context>, the file relative to the configured directory, with "+"
// and "%" in the file part percent-encoded, so that no two contexts ever share a name.
func ExampleProvider_ClusterName() {
	provider, err := file.New(file.Options{Dirs: []string{"/etc/mcr/fleet"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range []struct{ path, context string }{
		{"/etc/mcr/fleet/east.kubeconfig", "east"},
		{"/etc/mcr/fleet/merged.kubeconfig", "east"},
		{"/etc/mcr/fleet/merged.kubeconfig", "admin+west"},
		{"/etc/mcr/fleet/a+b.kubeconfig", "c"},
	} {
		name, _ := provider.ClusterName(c.path, c.context)
		fmt.Println(name)
	}
	// Output:
	// east.kubeconfig+east
	// merged.kubeconfig+east
	// merged.kubeconfig+admin+west
	// a%2Bb.kubeconfig+c
}

// A command-line flag that takes files, directories and globs, like $KUBECONFIG.
func ExampleParsePaths() {
	flags := flag.NewFlagSet("example", flag.ContinueOnError)
	paths := flags.String("fleet", "", "kubeconfig files, directories and globs, separated by ':'")
	_ = flags.Parse([]string{"-fleet", "/etc/fleet/prod.kubeconfig:/etc/fleets/*/kubeconfig:/var/run/fleet/"})
	files, dirs, globs := file.ParsePaths(*paths)
	fmt.Println("files:", files)
	fmt.Println("dirs:", dirs)
	fmt.Println("globs:", globs)
	// Output:
	// files: [/etc/fleet/prod.kubeconfig]
	// dirs: [/var/run/fleet/]
	// globs: [/etc/fleets/*/kubeconfig]
}

// Kubeconfig files only the operator writes, such as those cloud CLIs generate with exec plugins
// and certificate files: accept everything kubectl accepts. The default, the zero Policy,
// accepts inline credentials only, for files others may write.
func ExampleOptions_trusted() {
	_, err := file.New(file.Options{
		Files:   []string{"/home/operator/.kube/config"},
		Options: kit.Options{Policy: file.TrustedPolicy()},
	})
	fmt.Println(err)
	// Output: <nil>
}
