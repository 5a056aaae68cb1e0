// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	mcr "mcr.dev/core"
	"mcr.dev/providers/clusterprofile"
)

// Run a controller over every healthy cluster of a Cluster Inventory: the manager runs on the
// hub and starts the provider, which reaches each member through the operator's access
// providers (exec credential plugins) given with -clusterprofile-provider-file.
func Example() {
	loadProviders := clusterprofile.RegisterProviderFileFlag(flag.CommandLine)
	flag.Parse()
	providers, err := loadProviders()
	if err != nil {
		log.Fatal(err)
	}

	hub := mcr.GetConfigOrDie() // the cluster that holds the ClusterProfiles
	provider, err := clusterprofile.New(hub, clusterprofile.Options{AccessProviders: providers})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcr.NewManager(hub, provider, mcr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Build controllers on mgr as in mcr's Example (mcr.dev/core). A request's ClusterName is
	// "<namespace>/<name>" of its ClusterProfile, whose KEP-2149 identity
	// (provider.Identity(req.ClusterName)) says which cluster of which ClusterSet it is.
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		log.Fatal(err)
	}
}

// Serve the profiles one cluster manager registered in the "fleet" namespace, once they have
// joined and are healthy, keep them engaged through five minutes of reported ill health, and
// fall back to the deprecated kubeconfig Secrets for profiles that list no access provider.
func Example_options() {
	providers, err := clusterprofile.LoadProviderFile("/etc/mcr/clusterprofile-provider-file.json")
	if err != nil {
		log.Fatal(err)
	}
	provider, err := clusterprofile.New(mcr.GetConfigOrDie(), clusterprofile.Options{
		AccessProviders:    providers,
		Secret:             &clusterprofile.SecretStrategy{ConsumerName: "my-controller"},
		Namespaces:         []string{"fleet"},
		Selector:           labels.SelectorFromSet(labels.Set{v1alpha1.LabelClusterManagerKey: "ocm"}),
		IsReady:            clusterprofile.ConditionsTrue(v1alpha1.ClusterConditionControlPlaneHealthy, clusterprofile.ConditionJoined),
		UnreadyGracePeriod: 5 * time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = provider // hand it to mcr.NewManager
}

// The operator's provider file, as the flag loads it.
func ExampleRegisterProviderFileFlag() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = os.RemoveAll(dir) }()
	file := filepath.Join(dir, "providers.json")
	err = os.WriteFile(file, []byte(`{"providers": [
	  {"name": "token", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1",
	    "command": "/plugins/clusterprofile-token-plugin", "args": ["-namespace", "fleet-tokens"],
	    "provideClusterInfo": true}},
	  {"name": "gke", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1beta1",
	    "command": "gke-gcloud-auth-plugin", "provideClusterInfo": true},
	    "profileSourcedEnvVarsPolicy": "AppendIfNotExists"}]}`), 0o600)
	if err != nil {
		fmt.Println(err)
		return
	}

	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	load := clusterprofile.RegisterProviderFileFlag(fs)
	if err := fs.Parse([]string{"-clusterprofile-provider-file", file}); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := load()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range cfg.Providers {
		fmt.Printf("%s %s env policy %q\n", p.Name, p.ExecConfig.Command, p.ProfileSourcedEnvVarsPolicy)
	}
	// Output:
	// token /plugins/clusterprofile-token-plugin env policy ""
	// gke gke-gcloud-auth-plugin env policy "AppendIfNotExists"
}

// Cluster names are the namespace and name of the ClusterProfile, and map back to it.
func ExampleClusterName() {
	name := clusterprofile.ClusterName("fleet", "east")
	fmt.Println(name)
	key, err := clusterprofile.ClusterKey(name)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(key.Namespace, key.Name)
	// Output:
	// fleet/east
	// fleet east
}

// The KEP-2149 identity a ClusterProfile reports.
func ExampleIdentityOf() {
	cp := &v1alpha1.ClusterProfile{Status: v1alpha1.ClusterProfileStatus{Properties: []v1alpha1.Property{
		{Name: clusterprofile.PropertyClusterID, Value: "6bd7c9a0-2f0e-4bde-9f8c-0d2d1b3c4e5f"},
		{Name: clusterprofile.PropertyClusterSet, Value: "prod"},
	}}}
	id := clusterprofile.IdentityOf(cp)
	fmt.Println(id.ClusterID, id.ClusterSet, id.Validate())
	// Output:
	// 6bd7c9a0-2f0e-4bde-9f8c-0d2d1b3c4e5f prod <nil>
}
