// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package multi_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	upstreamkubeconfig "sigs.k8s.io/multicluster-runtime/providers/kubeconfig"

	mcbuilder "mcr.dev/core/builder"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/multi"
	"mcr.dev/core/providers/nop"
	"mcr.dev/core/providers/providertest"
	mcreconcile "mcr.dev/core/reconcile"
)

// multicluster-runtime's own kubeconfig provider, compiled against upstream's interfaces
// (its SetupWithManager takes upstream's Manager), runs unchanged under mcr's manager through
// mcmanager.Upstream, and inside multi through AsRunnable: the member cluster of its Secret is
// engaged and a controller built with mcr's builder reconciles in it.
func TestUpstreamSetupWithManagerProvider(t *testing.T) {
	for _, inMulti := range []bool{false, true} {
		t.Run(map[bool]string{false: "manager", true: "multi"}[inMulti], func(t *testing.T) {
			ctx := t.Context()
			hub, member := fleet.Member("a"), fleet.Member("b")
			ns := fmt.Sprintf("upstream-%d", time.Now().UnixNano()%1_000_000)
			hubClient, memberClient := newClient(t, hub.Config()), newClient(t, member.Config())
			for _, c := range []client.Client{hubClient, memberClient} {
				if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
					t.Fatal(err)
				}
			}

			kc := upstreamkubeconfig.New(upstreamkubeconfig.Options{Namespace: ns})
			var provider multicluster.Provider = kc
			want := multicluster.ClusterName("remote")
			var mp *multi.Provider
			if inMulti {
				mp = multi.New(multi.Options{})
				provider, want = mp, "kc#remote"
			}
			mgr, err := mcmanager.New(hub.Config(), provider, mcmanager.Options{
				Metrics:                metricsserver.Options{BindAddress: "0"},
				HealthProbeBindAddress: "0",
				Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if inMulti {
				if err := mp.AddProvider("kc", multi.AsRunnable(kc, mgr)); err != nil {
					t.Fatal(err)
				}
			} else if err := kc.SetupWithManager(ctx, mcmanager.Upstream(mgr)); err != nil {
				t.Fatal(err)
			}

			var mu sync.Mutex
			seen := map[string]bool{}
			err = mcbuilder.ControllerManagedBy(mgr).Named("upstream-" + ns).For(&corev1.ConfigMap{}).
				Complete(mcreconcile.Func(func(_ context.Context, req mcreconcile.Request) (reconcile.Result, error) {
					mu.Lock()
					defer mu.Unlock()
					seen[string(req.ClusterName)+"/"+req.Namespace+"/"+req.Name] = true
					return reconcile.Result{}, nil
				}))
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- mgr.Start(runCtx) }()
			defer func() {
				stop()
				if err := <-done; err != nil {
					t.Errorf("manager: %v", err)
				}
			}()

			secret := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "remote", Labels: map[string]string{upstreamkubeconfig.DefaultKubeconfigSecretLabel: "true"}},
				Data:       map[string][]byte{upstreamkubeconfig.DefaultKubeconfigSecretKey: member.Kubeconfig()},
			}
			if err := hubClient.Create(ctx, secret); err != nil {
				t.Fatal(err)
			}
			if err := memberClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "widget"}}); err != nil {
				t.Fatal(err)
			}
			key := string(want) + "/" + ns + "/widget"
			testcheck.WaitFor(t, "a reconcile of "+key, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return seen[key]
			})
			if _, err := mgr.GetCluster(ctx, want); err != nil {
				t.Errorf("GetCluster(%s): %v", want, err)
			}
		})
	}
}

func newClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A provider without SetupWithManager cannot run through AsRunnable: Start says why.
func TestAsRunnableNeedsSetupWithManager(t *testing.T) {
	mgr, err := mcmanager.New(fleet.Member("a").Config(), nil, mcmanager.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := multi.AsRunnable(nop.New(), mgr).(multicluster.ProviderRunnable)
	if !ok {
		t.Fatal("AsRunnable's provider is not runnable")
	}
	err = r.Start(t.Context(), providertest.NewRecorder())
	if err == nil || !strings.Contains(err.Error(), "has no SetupWithManager") {
		t.Errorf("Start = %v, want an error naming the missing SetupWithManager", err)
	}
}
