// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo_test

import (
	"fmt"
	"log"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	mcr "mcr.dev/core"
	"mcr.dev/providers/milo"
)

// Run a controller inside every ready Milo project: the manager runs against the Milo apiserver
// and starts the provider, which engages each project's control plane, reached through the Milo
// apiserver's project paths, once the Project is Ready.
func Example() {
	miloAPI := mcr.GetConfigOrDie() // the Milo apiserver
	provider, err := milo.New(miloAPI, milo.Options{})
	if err != nil {
		log.Fatal(err)
	}
	mgr, err := mcr.NewManager(miloAPI, provider, mcr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// Build controllers on mgr as in mcr's Example (mcr.dev/core). A request's ClusterName is
	// the project's name.
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		log.Fatal(err)
	}
}

// Inside Milo's infrastructure cluster, watch ProjectControlPlanes and reach every project's
// control plane at its in-cluster Service; serve only projects labeled tier=gold, and give a
// project that stops being ready two minutes to recover before it is disengaged.
func Example_projectControlPlane() {
	provider, err := milo.New(mcr.GetConfigOrDie(), milo.Options{
		Mode:               milo.ModeProjectControlPlane,
		Selector:           labels.SelectorFromSet(labels.Set{"tier": "gold"}),
		UnreadyGracePeriod: 2 * time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = provider // hand it to mcr.NewManager
}

// Where a project's control plane lives, in each mode.
func ExampleControlPlaneURL() {
	base, _ := url.Parse("https://milo.example.com:6443")
	fmt.Println(milo.ControlPlaneURL(base, "shop"))
	fmt.Println(milo.ServiceHost("shop"))
	fmt.Println(milo.ClusterName("shop"))
	// Output:
	// https://milo.example.com:6443/apis/resourcemanager.miloapis.com/v1alpha1/projects/shop/control-plane
	// https://milo-apiserver.project-shop.svc.cluster.local:6443
	// shop
}
