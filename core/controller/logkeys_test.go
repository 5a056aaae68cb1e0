// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package controller_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcbuilder "mcr.dev/core/builder"
	mccontroller "mcr.dev/core/controller"
	mchandler "mcr.dev/core/handler"
	"mcr.dev/core/internal/testcheck"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/core/providers/single"
	mcreconcile "mcr.dev/core/reconcile"
)

// A reconcile's logger carries controller-runtime's keys plus the cluster, so that log queries
// and dashboards written for controller-runtime work unchanged: those of its builder for a
// controller built with For, those of controller.New otherwise. Each case reconciles a real
// ConfigMap on a real apiserver and logs through the logger the reconcile's context carries.
func TestReconcileLogKeys(t *testing.T) {
	ns := namespace(t, "a")
	createConfigMap(t, "a", ns, "cm")
	common := []string{
		`"cluster"="a"`,
		`"namespace"="` + ns + `"`,
		`"name"="cm"`,
		`"reconcileID"="`,
	}
	// funcr's rendering of klog.KRef, which zap writes as {"name":"cm","namespace":...}.
	ref := `{"name"="cm" "namespace"="` + ns + `"}`

	for _, tc := range []struct {
		name   string
		build  func(mgr mcmanager.Manager, name string, r mcreconcile.Reconciler) error
		want   []string
		absent []string
		// controllerKeys are on every line of the controller.
		controllerKeys []string
	}{{
		name: "builder with For",
		build: func(mgr mcmanager.Manager, name string, r mcreconcile.Reconciler) error {
			return mcbuilder.ControllerManagedBy(mgr).Named(name).For(&corev1.ConfigMap{}).Complete(r)
		},
		want:           []string{`"controllerGroup"=""`, `"controllerKind"="ConfigMap"`, `"ConfigMap"=` + ref},
		absent:         []string{`"object"=`},
		controllerKeys: []string{`"controllerGroup"=""`, `"controllerKind"="ConfigMap"`},
	}, {
		name: "builder without For",
		build: func(mgr mcmanager.Manager, name string, r mcreconcile.Reconciler) error {
			return mcbuilder.ControllerManagedBy(mgr).Named(name).
				Watches(&corev1.ConfigMap{}, mchandler.TypedEnqueueRequestForObject[client.Object]()).Complete(r)
		},
		want:   []string{`"object"=` + ref},
		absent: []string{`"controllerGroup"`, `"controllerKind"`, `"ConfigMap"=`},
	}, {
		name: "controller.New",
		build: func(mgr mcmanager.Manager, name string, r mcreconcile.Reconciler) error {
			c, err := mccontroller.New(name, mgr, mccontroller.Options{Reconciler: r})
			if err != nil {
				return err
			}
			return c.MultiClusterWatch(configMaps())
		},
		want:   []string{`"object"=` + ref},
		absent: []string{`"controllerGroup"`, `"controllerKind"`, `"ConfigMap"=`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var logs providertest.LogBuffer
			members := single.New("a", startedCluster(t, fleet.Member("a").Config()), single.Options{AlreadyRunning: true})
			mgr, err := mcmanager.New(fleet.Member("host").Config(), members, mcmanager.Options{
				Logger:                 logs.Logger(),
				Metrics:                metricsserver.Options{BindAddress: "0"},
				HealthProbeBindAddress: "0",
				Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
			})
			if err != nil {
				t.Fatal(err)
			}
			name := "logkeys-" + strings.ReplaceAll(tc.name, " ", "-") + "-" + ns
			r := mcreconcile.Func(func(ctx context.Context, req mcreconcile.Request) (mcreconcile.Result, error) {
				if req.Namespace == ns {
					ctrllog.FromContext(ctx).Info("probe reconciled")
				}
				return mcreconcile.Result{}, nil
			})
			if err := tc.build(mgr, name, r); err != nil {
				t.Fatal(err)
			}
			runManager(t, mgr)
			testcheck.WaitFor(t, "the probe line", func() bool { return logs.Contains("probe reconciled") })

			line, err := logs.Find("probe reconciled")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range append([]string{`"controller"="` + name + `"`}, append(common, tc.want...)...) {
				if !strings.Contains(line, want) {
					t.Errorf("reconcile log line lacks %s:\n%s", want, line)
				}
			}
			for _, no := range tc.absent {
				if strings.Contains(line, no) {
					t.Errorf("reconcile log line has %s:\n%s", no, line)
				}
			}
			// Lines about the controller rather than a request carry the controller's keys too.
			if _, err := logs.Find(append([]string{"Starting workers", `"controller"="` + name + `"`}, tc.controllerKeys...)...); err != nil {
				t.Errorf("%v:\n%s", err, logs.String())
			}
		})
	}
}
