// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest_test

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"sigs.k8s.io/controller-runtime/pkg/client"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"mcr.dev/providers/gardener/internal/gardentest"
)

// TestGardenServesAdminKubeconfig starts a garden and follows one Shoot through creation,
// admin credentials from the real adminkubeconfig subresource, and a client CA rotation.
func TestGardenServesAdminKubeconfig(t *testing.T) {
	if _, err := gardentest.Binary(); err != nil && os.Getenv(gardentest.RequireEnv) == "" {
		t.Skipf("%v (set %s to fail instead)", err, gardentest.RequireEnv)
	}
	var out = os.Stderr
	if !testing.Verbose() {
		out = nil
	}
	opts := gardentest.Options{ShootServers: 1}
	if out != nil {
		opts.Output = out
	}
	g, err := gardentest.Start(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)

	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = gardencorev1beta1.AddToScheme(scheme)
	_ = authenticationv1alpha1.AddToScheme(scheme)
	c, err := client.New(g.Config(), client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := g.NewProject(t.Context(), c, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	server := g.ShootServers()[0]
	shoot := gardentest.Shoot(ns, "smoke")
	if err := c.Create(t.Context(), shoot); err != nil {
		t.Fatalf("creating a Shoot through gardener-apiserver: %v", err)
	}
	if err := g.ProvideShoot(t.Context(), c, ns, "smoke", server); err != nil {
		t.Fatal(err)
	}
	shoot.Status = gardencorev1beta1.ShootStatus{
		AdvertisedAddresses: []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: server.Host()}},
	}
	if err := c.Status().Update(t.Context(), shoot); err != nil {
		t.Fatalf("writing the Shoot's status: %v", err)
	}

	request := func() *authenticationv1alpha1.AdminKubeconfigRequest {
		t.Helper()
		req := &authenticationv1alpha1.AdminKubeconfigRequest{Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
		if err := c.SubResource("adminkubeconfig").Create(t.Context(), shoot, req); err != nil {
			t.Fatalf("POST adminkubeconfig: %v", err)
		}
		return req
	}
	works := func(kubeconfig []byte) error {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
		if err != nil {
			return err
		}
		sc, err := client.New(cfg, client.Options{})
		if err != nil {
			return err
		}
		return sc.List(t.Context(), &corev1.NamespaceList{})
	}
	first := request()
	if left := time.Until(first.Status.ExpirationTimestamp.Time); left < 9*time.Minute || left > 11*time.Minute {
		t.Errorf("credentials expire in %s, want 10 minutes", left)
	}
	if err := works(first.Status.Kubeconfig); err != nil {
		t.Fatalf("the issued admin kubeconfig does not work on the shoot server: %v", err)
	}

	revoke, err := g.RotateClientCA(t.Context(), c, ns, "smoke")
	if err != nil {
		t.Fatal(err)
	}
	second := request()
	for i, kc := range [][]byte{first.Status.Kubeconfig, second.Status.Kubeconfig} {
		if err := works(kc); err != nil {
			t.Errorf("during the rotation, credentials %d do not work: %v", i+1, err)
		}
	}
	if err := revoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := works(first.Status.Kubeconfig); err == nil {
		t.Error("credentials signed by the old client CA still work after the rotation")
	}
	if err := works(second.Status.Kubeconfig); err != nil {
		t.Errorf("credentials signed by the new client CA: %v", err)
	}
}
