// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"mcr.dev/core/envtest"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// rbacWindow bounds each step of rbacScenario: long enough for the provider with every
// permission of the manifest (the "nothing removed" run shows it), short enough to keep the
// runs that must fail quick.
const rbacWindow = 20 * time.Second

// TestEachPermissionIsNeeded runs the provider, with both strategies, as a ServiceAccount that
// has the permissions of config/rbac.yaml less one, for each permission the manifest grants,
// and shows that something the provider does with all of them then fails: engaging profiles
// (access provider and Secret strategy), recording their Events, counting an Event recorded
// again in a series, and making no request the hub refuses (a refused watch is logged). A run with the whole manifest shows the same steps
// succeed within the same window.
func TestEachPermissionIsNeeded(t *testing.T) {
	t.Parallel()
	rules := providertest.MustManifestRules(t, "config/rbac.yaml", "ClusterRole")
	t.Run("nothing removed", func(t *testing.T) {
		t.Parallel()
		if err := rbacScenario(t, rules); err != nil {
			t.Fatalf("with every permission of the manifest: %v", err)
		}
	})
	for _, r := range providertest.EachPermissionRemoved(rules) {
		t.Run("without "+r.Removed, func(t *testing.T) {
			t.Parallel()
			err := rbacScenario(t, r.Rules)
			if err == nil {
				t.Fatalf("the provider did everything without %s: the permission is not needed, remove it from config/rbac.yaml", r.Removed)
			}
			t.Logf("without %s: %v", r.Removed, err)
		})
	}
}

// rbacScenario runs the provider as a ServiceAccount with exactly rules on the hub and returns
// the first step that did not happen within rbacWindow.
func rbacScenario(t *testing.T, rules []rbacv1.PolicyRule) error {
	ns := namespace(t)
	data, err := fleet.Member("hub").ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{
		Name: "cp-" + ns, ClusterRules: rules,
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	p, err := clusterprofile.New(cfg, clusterprofile.Options{
		Namespaces:         []string{ns},
		AccessProviders:    accessConfig(t, ""),
		Secret:             &clusterprofile.SecretStrategy{ConsumerName: consumer},
		UnreadyGracePeriod: -1,
		Options: kit.Options{
			Logger:           logs.Logger(),
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

	// Start fails when the host cache cannot sync: that is a failure the scenario reports.
	var startErr error
	run := providertest.RunInBackground(t, "the provider", waitTimeout, func(ctx context.Context) error {
		startErr = p.Start(ctx, providertest.NewRecorder())
		return nil
	})
	stopped := run.Done()

	within := func(what string, check func() error) error {
		deadline := time.Now().Add(rbacWindow)
		for {
			err := check()
			if err == nil {
				return nil
			}
			select {
			case <-stopped:
				return fmt.Errorf("%s: the provider stopped: %w", what, startErr)
			default:
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: not within %s: %w", what, rbacWindow, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	engaged := func(name string) func() error {
		return func() error {
			_, err := p.Get(t.Context(), clusterprofile.ClusterName(ns, name))
			return err
		}
	}
	for _, name := range []string{"byplugin", "bysecret"} {
		if name == "bysecret" {
			if err := writeKubeconfigSecret(t.Context(), ns, "bysecret", saKubeconfig(t, "west", ns+"-s")); err != nil {
				t.Fatal(err)
			}
			mustCreateProfile(t, ns, "bysecret", healthyStatus())
		}
		if err := within("profile "+name+" engaged", engaged(name)); err != nil {
			return err
		}
		if err := within("Event ClusterEngaged on "+name, func() error {
			_, err := engagedEvent(t.Context(), ns, name)
			return err
		}); err != nil {
			return err
		}
	}
	// The same Warning again, for unchanged objects: Unauthorized, ClusterUnreachable while the
	// member is down, Unauthorized again once it is back. The Events library counts the second
	// Unauthorized in the first one's series, with a patch.
	if err := within("Event Unauthorized on flapping", func() error {
		_, err := eventOf(t.Context(), ns, "flapping", kit.ReasonUnauthorized)
		return err
	}); err != nil {
		return err
	}
	flap.Down()
	if err := within("Event ClusterUnreachable on flapping", func() error {
		_, err := eventOf(t.Context(), ns, "flapping", kit.ReasonClusterUnreachable)
		return err
	}); err != nil {
		return err
	}
	if err := flap.Up(); err != nil {
		return err
	}
	if err := within("the second Unauthorized Event of flapping counted in a series", func() error {
		e, err := eventOf(t.Context(), ns, "flapping", kit.ReasonUnauthorized)
		if err != nil {
			return err
		}
		if e.Series == nil || e.Series.Count < 2 {
			return fmt.Errorf("series %+v", e.Series)
		}
		return nil
	}); err != nil {
		return err
	}

	// Nothing the provider asked for was refused: a watch that is refused does not stop it
	// (its cache lists again, with backoff), but is logged.
	user := fmt.Sprintf("system:serviceaccount:mcr-system:cp-%s", ns)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range providertest.ProcessLogs.Lines() {
			if strings.Contains(line, user) && strings.Contains(strings.ToLower(line), "forbidden") {
				return fmt.Errorf("a request was refused: %s", line)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil
}

// engagedEvent returns the ClusterEngaged Event of the profile ns/name.
func engagedEvent(ctx context.Context, ns, name string) (*eventsv1.Event, error) {
	return eventOf(ctx, ns, name, kit.ReasonClusterEngaged)
}

// eventOf returns the Event of reason on the profile ns/name.
func eventOf(ctx context.Context, ns, name, reason string) (*eventsv1.Event, error) {
	evs, err := events(ctx, ns, name, reason)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, errors.New("no such Event")
	}
	return &evs[0], nil
}
