// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/envtest"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// consumer is the consumer name of the Secret strategy in the tests.
const consumer = "mcr-test"

// writeKubeconfigSecret creates or replaces the kubeconfig Secret of the profile ns/profile.
func writeKubeconfigSecret(ctx context.Context, ns, profile string, data []byte) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: profile + "-kubeconfig", Labels: map[string]string{
			clusterprofile.SecretLabelConsumer: consumer,
			clusterprofile.SecretLabelProfile:  profile,
		}},
		Data: map[string][]byte{clusterprofile.SecretDataKey: data},
	}
	err := hub.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		err = hub.Update(ctx, s)
	}
	return err
}

func saKubeconfig(t *testing.T, member, sa string) []byte {
	t.Helper()
	data, err := fleet.Member(member).ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: sa})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// healthyStatus is a healthy status without access providers.
func healthyStatus() v1alpha1.ClusterProfileStatus {
	var s v1alpha1.ClusterProfileStatus
	healthy(&s, true)
	return s
}

// TestSecretStrategy runs the deprecated Secret strategy next to access providers: profiles that
// list the operator's access provider use it, the others their kubeconfig Secret, loaded under
// the hardened kubeconfig policy.
func TestSecretStrategy(t *testing.T) {
	ns := namespace(t)
	r := &providertest.Calls{}
	s := start(t, ns, clusterprofile.Options{
		AccessProviders: accessConfig(t, ""),
		Secret:          &clusterprofile.SecretStrategy{ConsumerName: consumer},
		IsReady:         providertest.Counted(r, clusterprofile.ControlPlaneHealthy),
	})

	// Kubeconfig Secret.
	if err := writeKubeconfigSecret(t.Context(), ns, "bysecret", saKubeconfig(t, "east", ns+"-a")); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "bysecret", healthyStatus())
	name := clusterprofile.ClusterName(ns, "bysecret")
	first := s.WaitEngaged(t, name)
	s.requireReaches(t, name, "east")
	waitEvent(t, ns, "bysecret", kit.ReasonClusterEngaged, "Secret "+ns+"/bysecret-kubeconfig")

	// Access provider, in the same provider.
	if err := writeTokenSecret(t.Context(), ns+"-plugin", mustMemberToken(t, "west", ns+"-plugin"), ""); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "byplugin", readyStatus("west", ns+"-plugin", ""))
	s.WaitEngaged(t, clusterprofile.ClusterName(ns, "byplugin"))
	s.requireReaches(t, clusterprofile.ClusterName(ns, "byplugin"), "west")

	// An annotation on the Secret is looked at and changes nothing.
	before := r.Count("bysecret")
	secret := &corev1.Secret{}
	if err := hub.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: "bysecret-kubeconfig"}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Annotations = map[string]string{"touched": "yes"}
	if err := hub.Update(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	r.WaitMore(t, "bysecret", before, waitTimeout)
	if n := s.rec.Count(name); n != 1 || !first.Alive() {
		t.Fatalf("engaged %d times after an annotation change, want 1", n)
	}

	// A new kubeconfig re-engages at once.
	if err := writeKubeconfigSecret(t.Context(), ns, "bysecret", saKubeconfig(t, "east", ns+"-b")); err != nil {
		t.Fatal(err)
	}
	s.rec.WaitReengaged(t, s.provider, name, first, waitTimeout)
	if err := revokeToken(t.Context(), "east", ns+"-a"); err != nil {
		t.Fatal(err)
	}
	s.requireReaches(t, name, "east")
	waitEvent(t, ns, "bysecret", kit.ReasonCredentialsRotated)

	// An exec plugin in a Secret is refused by the hardened policy.
	execCfg := clientcmdapi.NewConfig()
	execCfg.Clusters["c"] = &clientcmdapi.Cluster{Server: fleet.Member("north").Host(), CertificateAuthorityData: fleet.Member("north").Config().CAData}
	execCfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "steal-everything", APIVersion: "client.authentication.k8s.io/v1"}}
	execCfg.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	execCfg.CurrentContext = "c"
	data, err := clientcmd.Write(*execCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeKubeconfigSecret(t.Context(), ns, "execy", data); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "execy", healthyStatus())
	waitEvent(t, ns, "execy", kit.ReasonInvalidKubeconfig, "AllowExec")
	s.WaitLogged(t, clusterprofile.ClusterName(ns, "execy"), "Cluster cannot be engaged", `"reason"="`+kubeconfig.ReasonExecPlugin+`"`)

	// No Secret at all.
	mustCreateProfile(t, ns, "nothing", healthyStatus())
	waitEvent(t, ns, "nothing", clusterprofile.ReasonKubeconfigSecretMissing, clusterprofile.SecretLabelConsumer+"="+consumer)

	// Two matching Secrets are ambiguous.
	for _, n := range []string{"twin-1", "twin-2"} {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{
				clusterprofile.SecretLabelConsumer: consumer, clusterprofile.SecretLabelProfile: "twins",
			}},
			Data: map[string][]byte{clusterprofile.SecretDataKey: fleet.Member("north").Kubeconfig()},
		}
		if err := hub.Create(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	mustCreateProfile(t, ns, "twins", healthyStatus())
	waitEvent(t, ns, "twins", kit.ReasonInvalidKubeconfig, "want exactly one")
	if err := hub.Delete(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "twin-2"}}); err != nil {
		t.Fatal(err)
	}
	s.WaitEngaged(t, clusterprofile.ClusterName(ns, "twins"))
	s.requireReaches(t, clusterprofile.ClusterName(ns, "twins"), "north")
}
