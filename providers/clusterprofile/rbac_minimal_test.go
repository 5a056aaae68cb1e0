// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// rbacWindow bounds each step of rbacScenario: long enough for the provider with every
// permission of the manifest (the control run shows it), short enough to keep the runs that
// must fail quick.
const rbacWindow = 20 * time.Second

// TestEachPermissionIsNeeded runs the provider, with both strategies, as a ServiceAccount that
// has the permissions of config/rbac.yaml less one, for each permission the manifest grants,
// and shows that something the provider does with all of them then fails: engaging profiles
// (access provider and Secret strategy), recording their Events, counting an Event recorded
// again in a series, and making no request the hub refuses (a refused watch is logged). A run
// with the whole manifest shows the same steps succeed within the same window
// (providertest.RunPermissionTests).
func TestEachPermissionIsNeeded(t *testing.T) {
	t.Parallel()
	providertest.RunPermissionTests(t, providertest.PermissionTest{
		Rules: providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole"),
		Scenario: func(t *testing.T, c providertest.PermissionCase, _ string) []string {
			return rbacScenario(t, c.Rules)
		},
	})
}

// rbacScenario runs the provider as a ServiceAccount with exactly rules on the hub and returns
// what failed, stopping at the first step that did not happen within rbacWindow.
func rbacScenario(t *testing.T, rules []rbacv1.PolicyRule) []string {
	ns := namespace(t)
	cfg := providertest.ServiceAccountConfig(t, fleet.Member("hub"), envtest.ServiceAccountOptions{Name: "cp-" + ns, ClusterRules: rules})
	p, err := clusterprofile.New(cfg, clusterprofile.Options{
		Namespaces:         []string{ns},
		AccessProviders:    accessConfig(t, ""),
		Secret:             &clusterprofile.SecretStrategy{ConsumerName: consumer},
		UnreadyGracePeriod: -1,
		Options: kit.Options{
			Logger:           (&logBuffer{}).Logger(),
			CacheSyncTimeout: 10 * time.Second,
			RetryMinDelay:    100 * time.Millisecond,
			RetryMaxDelay:    time.Second,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	// byplugin exists before the provider starts (its cache lists it), bysecret is created
	// once byplugin is engaged (its cache must watch).
	if err := writeTokenSecret(t.Context(), ns+"-p", mustMemberToken(t, "east", ns+"-p"), ""); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "byplugin", readyStatus("east", ns+"-p", ""))
	// flapping reaches east through a forwarder, with a token east refuses.
	east := fleet.Member("east")
	flap := envtest.StartForwarderForTest(t, east)
	bad := clientcmdapi.NewConfig()
	bad.Clusters["east"] = &clientcmdapi.Cluster{Server: flap.URL(), CertificateAuthorityData: east.Config().CAData}
	bad.AuthInfos["east"] = &clientcmdapi.AuthInfo{Token: "not-a-token-east-accepts"}
	bad.Contexts["east"] = &clientcmdapi.Context{Cluster: "east", AuthInfo: "east"}
	bad.CurrentContext = "east"
	badData, err := clientcmd.Write(*bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeKubeconfigSecret(t.Context(), ns, "flapping", badData); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "flapping", healthyStatus())

	// Start fails when the host cache cannot sync: that is a failure the trial reports.
	trial := providertest.StartTrial(t, p, rbacWindow, waitTimeout)
	engaged := func(name string) bool {
		return trial.Within("profile "+name+" engaged", func() bool {
			_, err := p.Get(t.Context(), clusterprofile.ClusterName(ns, name))
			return err == nil
		}) && trial.Within("Event ClusterEngaged on "+name, func() bool {
			evs, err := events(t.Context(), ns, name, kit.ReasonClusterEngaged)
			return err == nil && len(evs) > 0
		})
	}
	if engaged("byplugin") && func() bool {
		if err := writeKubeconfigSecret(t.Context(), ns, "bysecret", saKubeconfig(t, "west", ns+"-s")); err != nil {
			t.Fatal(err)
		}
		mustCreateProfile(t, ns, "bysecret", healthyStatus())
		return true
	}() && engaged("bysecret") && providertest.FlappingMemberSteps(trial, flap, func(reason string) int32 {
		return providertest.EventCount(t.Context(), hub, ns, providertest.EventTarget{Kind: "ClusterProfile", Name: "flapping"}, reason)
	}) {
		trial.WatchForbidden("system:serviceaccount:mcr-system:cp-"+ns, 5*time.Second, &providertest.ProcessLogs)
	}
	return trial.Failures()
}
