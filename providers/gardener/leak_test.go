// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/gardener"
	"mcr.dev/providers/gardener/internal/frontproxy"
)

// TestNeverReportsCredentials plants a marker secret in every field of a member's credentials
// the provider reads — every credential field of the adminkubeconfig answer (token, client key,
// server URL, ...) and of the seed's "gardener" Secret, the Shoot's advertised address that
// Gardener puts into the answer's server, and a Shoot field gardenlet embeds in a seed's
// Cluster object — and drives members of both topologies through engage, failure, rotation and
// removal on real apiservers. No log line (the provider's and the process-wide controller-runtime
// and klog loggers), Event, error of the provider's API or metric may carry a marker.
func TestNeverReportsCredentials(t *testing.T) {
	leaks := providertest.NewLeakCheck()
	mark := func(label string) string {
		m := providertest.Marker(label)
		leaks.Add(m)
		return m
	}
	admin := fleet.Member("east").Config()
	answerMarker, secretMarker := mark("adminkubeconfig"), mark("seedsecret")
	answers, err := providertest.MarkedKubeconfigs(admin, answerMarker)
	if err != nil {
		t.Fatal(err)
	}
	secrets, err := providertest.MarkedKubeconfigs(fleet.Member("west").Config(), secretMarker)
	if err != nil {
		t.Fatal(err)
	}

	// The garden: the adminkubeconfig answer of a Shoot is the marked kubeconfig named after
	// it, or a kubeconfig for its advertised address (as Gardener issues them), or a real one.
	var mu sync.Mutex
	minted := map[string][]byte{}
	mint := func(ctx context.Context, shoot *gardencorev1beta1.Shoot, validity time.Duration) ([]byte, time.Time, error) {
		mu.Lock()
		data, ok := minted[shoot.Name]
		mu.Unlock()
		switch {
		case ok:
			return data, time.Now().Add(validity), nil
		case shoot.Name == "advertised":
			data, err := serverKubeconfig(frontproxy.APIServerAddresses(shoot)[0].URL, admin.CAData)
			return data, time.Now().Add(validity), err
		}
		return minter.Mint(ctx, shoot, validity)
	}
	proxy, err := frontproxy.Start(frontproxy.Options{Garden: fleet.Member("host").Config(), Mint: mint})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	ns := newNamespace(t, "garden-leak")
	garden := startGarden(t, proxy, ns, gardener.Options{})

	shootReasons := map[string]string{}
	for i, a := range answers {
		name := fmt.Sprintf("answer-%d", i)
		mu.Lock()
		minted[name] = a.Kubeconfig
		mu.Unlock()
		usableShoot(t, ns, name, "east")
		shootReasons[name] = a.Reason
		t.Logf("shoot %s: %s, want %s", name, a.Field, a.Reason)
	}
	newShoot(t, ns, "advertised", nil)
	mustUpdateShoot(t, client.ObjectKey{Namespace: ns, Name: "advertised"}, true, func(s *gardencorev1beta1.Shoot) {
		s.Status = usableStatus(ns, "advertised", strings.Replace(fleet.Member("east").Host(), "://", "://admin:"+mark("advertisedaddress")+"@", 1))
	})
	shootReasons["advertised"] = kit.ReasonInvalidKubeconfig
	working := usableShoot(t, ns, "working", "east")

	// The seed: a marked "gardener" Secret per control plane, one that works, and a Cluster
	// object whose embedded Shoot has a field that does not decode.
	seed := startSeed(t, gardener.Options{Namespaces: []string{"garden-leakseed"}})
	clusterReasons := map[string]string{}
	for i, s := range secrets {
		shoot := embeddedShoot("leakseed", fmt.Sprintf("secret-%d", i), nil)
		if err := writeSeedSecret(t.Context(), "shoot--leakseed--"+shoot.Name, s.Kubeconfig, nil); err != nil {
			t.Fatal(err)
		}
		name, err := seedCluster(t.Context(), "leakseed", shoot)
		if err != nil {
			t.Fatal(err)
		}
		clusterReasons[name] = s.Reason
	}
	if err := writeSeedSecret(t.Context(), "shoot--leakseed--working", memberToken(t, "west", "leak-working"), nil); err != nil {
		t.Fatal(err)
	}
	seedWorking, err := seedCluster(t.Context(), "leakseed", embeddedShoot("leakseed", "working", nil))
	if err != nil {
		t.Fatal(err)
	}
	badShoot := &extensionsv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "shoot--leakseed--badshoot"},
		Spec: extensionsv1alpha1.ClusterSpec{
			CloudProfile: runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"CloudProfile","metadata":{"name":"local"}}`)},
			Seed:         runtime.RawExtension{Raw: []byte(`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Seed","metadata":{"name":"local"}}`)},
			Shoot: runtime.RawExtension{Raw: fmt.Appendf(nil,
				`{"apiVersion":"core.gardener.cloud/v1beta1","kind":"Shoot","metadata":{"name":"badshoot","namespace":"garden-leakseed"},"status":{"lastOperation":{"lastUpdateTime":%q}}}`,
				mark("embeddedshoot"))},
		},
	}
	if err := host.Create(t.Context(), badShoot); err != nil {
		t.Fatal(err)
	}
	clusterReasons[badShoot.Name] = gardener.ReasonInvalidCluster

	// Engage.
	workingName := gardener.ShootClusterName(ns, "working")
	firstWorking := garden.WaitEngaged(t, workingName)
	seedName := gardener.SeedClusterName(seedWorking)
	firstSeed := seed.WaitEngaged(t, seedName)

	// Failures, each reported with its reason.
	for name, reason := range shootReasons {
		waitEvent(t, "Shoot", ns, name, reason)
	}
	for name, reason := range clusterReasons {
		waitEvent(t, "Cluster", "", name, reason)
	}

	// Rotation: new credentials (a certificate authority rotation asks for them at once), then
	// credentials the shoot refuses, while the cluster stays engaged.
	rotate := func(phase gardencorev1beta1.CredentialsRotationPhase) {
		t.Helper()
		mustUpdateShoot(t, working, true, func(s *gardencorev1beta1.Shoot) {
			s.Status.Credentials = &gardencorev1beta1.ShootCredentials{Rotation: &gardencorev1beta1.ShootCredentialsRotation{
				CertificateAuthorities: &gardencorev1beta1.CARotation{Phase: phase, LastInitiationTime: &metav1.Time{Time: time.Now()}},
			}}
		})
	}
	rotate(gardencorev1beta1.RotationPreparing)
	// The new credentials are another token of the same identity: taken in place.
	garden.rec.WaitRefreshedInPlace(t, garden.logs, workingName, firstWorking, 1, waitTimeout)
	secondWorking := firstWorking
	waitEvent(t, "Shoot", ns, "working", kit.ReasonCredentialsRotated)
	for _, a := range answers {
		if a.Reason == kit.ReasonUnauthorized {
			mu.Lock()
			minted["working"] = a.Kubeconfig
			mu.Unlock()
			break
		}
	}
	rotate(gardencorev1beta1.RotationPrepared)
	waitEvent(t, "Shoot", ns, "working", kit.ReasonUnauthorized)
	if !secondWorking.Alive() {
		t.Error("the engaged shoot was dropped when its new credentials were refused")
	}

	if err := writeSeedSecret(t.Context(), "shoot--leakseed--working", memberToken(t, "west", "leak-rotated"), nil); err != nil {
		t.Fatal(err)
	}
	seed.rec.WaitReengaged(t, seed.provider, seedName, firstSeed, waitTimeout)
	waitEvent(t, "Cluster", "", seedWorking, kit.ReasonCredentialsRotated)
	for _, s := range secrets {
		if s.Reason == kit.ReasonUnauthorized {
			if err := writeSeedSecret(t.Context(), "shoot--leakseed--working", s.Kubeconfig, nil); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	waitEvent(t, "Cluster", "", seedWorking, kit.ReasonUnauthorized)

	// The provider's API about members that are not engaged.
	for _, name := range []string{"answer-0", "answer-2", "advertised"} {
		_, err := garden.provider.Get(t.Context(), gardener.ShootClusterName(ns, name))
		if err == nil {
			t.Errorf("Get(%s) of a shoot with refused credentials succeeded", name)
		}
		leaks.ScanError("Get", err)
	}
	for name := range clusterReasons {
		_, err := seed.provider.Get(t.Context(), gardener.SeedClusterName(name))
		leaks.ScanError("Get", err)
	}

	// Removal.
	providertest.DeleteAll(t, host, &gardencorev1beta1.ShootList{}, client.InNamespace(ns))
	var clusters extensionsv1alpha1.ClusterList
	if err := host.List(t.Context(), &clusters); err != nil {
		t.Fatal(err)
	}
	for i := range clusters.Items {
		if strings.HasPrefix(clusters.Items[i].Name, "shoot--leakseed--") {
			if err := host.Delete(t.Context(), &clusters.Items[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range []*running{garden, seed} {
		providertest.WaitNoneEngaged(t, r.provider, waitTimeout)
	}

	leaks.Report(t, providertest.LeakReport{
		Logs:   []*providertest.LogBuffer{garden.logs, seed.logs},
		Events: []*rest.Config{fleet.Member("host").Config()},
	})
}

// serverKubeconfig returns a kubeconfig for server with a token, as Gardener issues one per
// advertised address.
func serverKubeconfig(server string, ca []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["shoot"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["shoot"] = &clientcmdapi.AuthInfo{Token: "not-the-marker"}
	cfg.Contexts["shoot"] = &clientcmdapi.Context{Cluster: "shoot", AuthInfo: "shoot"}
	cfg.CurrentContext = "shoot"
	return clientcmd.Write(*cfg)
}
