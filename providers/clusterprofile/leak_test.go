// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterprofile"
)

// TestNeverReportsCredentials plants a marker secret in every field of a member's credentials
// the provider reads — the operator's provider file (plugin args and env), the profile's
// access-provider data (server user info and query, proxy-url password, exec env of the
// additional-envs extension, the exec extension handed to the plugin, an unrelated extension),
// the plugin's output (a token the member refuses) and every credential field of a kubeconfig
// Secret — and drives members through engage, failure, rotation and removal on real
// apiservers. No log line (the provider's and the process-wide controller-runtime and klog
// loggers), Event, error of the provider's API or metric may carry a marker.
func TestNeverReportsCredentials(t *testing.T) {
	ns := namespace(t)
	leaks := providertest.NewLeakCheck()
	mark := func(label string) string {
		m := providertest.Marker(label)
		leaks.Add(m)
		return m
	}

	// The operator's provider file: the plugin reads the token under a marked data key (an
	// argument) and gets a marked variable it does not use; profile-sourced env is allowed.
	argKey, operatorEnv := mark("arg"), mark("operatorenv")
	file := fmt.Sprintf(`{"providers": [{"name": %q,
  "execConfig": {"apiVersion": "client.authentication.k8s.io/v1", "command": %q,
    "args": ["-kubeconfig", %q, "-namespace", %q, "-key", %q], "provideClusterInfo": true,
    "env": [{"name": "MCR_OPERATOR_SECRET", "value": %q}]},
  "profileSourcedEnvVarsPolicy": "AppendIfNotExists"}]}`,
		accessProviderName, pluginPath, hubKubeconfigPath, tokenNamespace, argKey, operatorEnv)
	cfg, err := clusterprofile.ParseProviderFile([]byte(file))
	if err != nil {
		t.Fatalf("parsing the provider file: %v", err)
	}
	// A provider file that does not validate is reported without its args and env.
	_, err = clusterprofile.ParseProviderFile([]byte(strings.Replace(file, "client.authentication.k8s.io/v1", "v0", 1)))
	if err == nil {
		t.Fatal("a provider file with a wrong apiVersion was accepted")
	}
	leaks.ScanError("ParseProviderFile", err)

	s := start(t, ns, clusterprofile.Options{
		AccessProviders: cfg,
		Secret:          &clusterprofile.SecretStrategy{ConsumerName: consumer},
		Options:         kit.Options{Policy: kubeconfig.Policy{AllowExecEnv: "MCR_LEAK_*"}},
	})
	token := func(label, value string) string {
		t.Helper()
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: tokenNamespace, Name: ns + "-" + label},
			Data:       map[string][]byte{argKey: []byte(value)},
		}
		if err := hub.Create(t.Context(), secret); err != nil {
			t.Fatal(err)
		}
		return secret.Name
	}
	extension := func(name string, v any) clientcmdv1.NamedExtension {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return clientcmdv1.NamedExtension{Name: name, Extension: runtime.RawExtension{Raw: raw}}
	}
	// profile creates a ready profile reached through the plugin with the token Secret
	// secretName, after change.
	profile := func(name, secretName string, change func(*v1alpha1.AccessProvider)) {
		t.Helper()
		status := readyStatus("east", secretName, secretName)
		change(&status.AccessProviders[0])
		mustCreateProfile(t, ns, name, status)
	}
	nothing := func(*v1alpha1.AccessProvider) {}

	// Engaged: every marker of the provider file and an allowed profile-sourced variable.
	working := token("working", mustMemberToken(t, "east", ns+"-working"))
	profileEnv, vendorData := mark("profileenv"), mark("vendorext")
	profile("working", working, func(ap *v1alpha1.AccessProvider) {
		ap.Cluster.Extensions = append(ap.Cluster.Extensions,
			extension(clusterprofile.AdditionalEnvsExtension, map[string]string{"MCR_LEAK_TOKEN": profileEnv}),
			extension("vendor.example.com/credentials", map[string]string{"password": vendorData}))
	})

	// Refused before the plugin runs.
	withUserInfo := strings.Replace(fleet.Member("east").Host(), "://", "://admin:"+mark("serveruserinfo")+"@", 1)
	profile("userinfo", working, func(ap *v1alpha1.AccessProvider) { ap.Cluster.Server = withUserInfo })
	profile("query", working, func(ap *v1alpha1.AccessProvider) {
		ap.Cluster.Server = fleet.Member("east").Host() + "/?access_token=" + mark("serverquery")
	})
	profile("proxy", working, func(ap *v1alpha1.AccessProvider) {
		ap.Cluster.ProxyURL = "http://proxy-user:" + mark("proxypassword") + "@127.0.0.1:1"
	})
	profile("env", working, func(ap *v1alpha1.AccessProvider) {
		ap.Cluster.Extensions = append(ap.Cluster.Extensions,
			extension(clusterprofile.AdditionalEnvsExtension, map[string]string{"LD_PRELOAD": "/tmp/" + mark("ldpreload") + ".so"}))
	})
	// The plugin refuses the exec extension it is handed (an unknown field).
	profile("execconfig", working, func(ap *v1alpha1.AccessProvider) {
		ap.Cluster.Extensions[0] = extension(clusterprofile.ExecExtension, map[string]string{
			"clusterName": working, "password": mark("execextension"),
		})
	})
	// The plugin answers with a token the member refuses.
	refusedToken := mark("pluginoutput")
	refused := token("refused", refusedToken)
	profile("refused", refused, nothing)

	// The Secret strategy: a marker in every credential field of a kubeconfig.
	secretMarker := mark("kubeconfigsecret")
	marked, err := providertest.MarkedKubeconfigs(fleet.Member("west").Config(), secretMarker)
	if err != nil {
		t.Fatal(err)
	}
	secretProfiles := map[string]providertest.MarkedKubeconfig{}
	for i, m := range marked {
		name := fmt.Sprintf("secret-%d", i)
		secretProfiles[name] = m
		if err := writeKubeconfigSecret(t.Context(), ns, name, m.Kubeconfig); err != nil {
			t.Fatal(err)
		}
		mustCreateProfile(t, ns, name, healthyStatus())
	}
	// And one that works, to rotate.
	if err := writeKubeconfigSecret(t.Context(), ns, "rotating", saKubeconfig(t, "west", ns+"-rotating")); err != nil {
		t.Fatal(err)
	}
	mustCreateProfile(t, ns, "rotating", healthyStatus())

	// Engage.
	workingName := clusterprofile.ClusterName(ns, "working")
	firstWorking := s.WaitEngaged(t, workingName)
	s.requireReaches(t, workingName, "east")
	rotatingName := clusterprofile.ClusterName(ns, "rotating")
	firstRotating := s.WaitEngaged(t, rotatingName)

	// Failures, each reported with its reason.
	for name, reason := range map[string]string{
		"userinfo":   clusterprofile.ReasonInvalidAccessProvider,
		"query":      clusterprofile.ReasonInvalidAccessProvider,
		"proxy":      clusterprofile.ReasonInvalidAccessProvider,
		"env":        clusterprofile.ReasonInvalidAccessProvider,
		"execconfig": clusterprofile.ReasonCredentialPluginFailed,
		"refused":    kit.ReasonUnauthorized,
	} {
		waitEvent(t, ns, name, reason)
	}
	for name, m := range secretProfiles {
		t.Logf("%s: %s, want %s", name, m.Field, m.Reason)
		waitEvent(t, ns, name, m.Reason)
	}

	// Rotation: the plugin profile to a new token Secret, then to one the member refuses (it
	// stays engaged); the Secret profile to a new kubeconfig, then to a marked one.
	rotated := token("rotated", mustMemberToken(t, "east", ns+"-rotated"))
	mustUpdateStatus(t, client.ObjectKey{Namespace: ns, Name: "working"}, func(st *v1alpha1.ClusterProfileStatus) {
		st.AccessProviders[0].Cluster.Extensions[0] = extension(clusterprofile.ExecExtension, map[string]string{"clusterName": rotated})
	})
	secondWorking := s.rec.WaitReengaged(t, s.provider, workingName, firstWorking, waitTimeout)
	waitEvent(t, ns, "working", kit.ReasonCredentialsRotated)
	mustUpdateStatus(t, client.ObjectKey{Namespace: ns, Name: "working"}, func(st *v1alpha1.ClusterProfileStatus) {
		st.AccessProviders[0].Cluster.Extensions[0] = extension(clusterprofile.ExecExtension, map[string]string{"clusterName": refused})
	})
	waitEvent(t, ns, "working", kit.ReasonUnauthorized)
	if !secondWorking.Alive() {
		t.Error("the engaged cluster was dropped when its new credentials were refused")
	}

	if err := writeKubeconfigSecret(t.Context(), ns, "rotating", saKubeconfig(t, "west", ns+"-rotated")); err != nil {
		t.Fatal(err)
	}
	s.rec.WaitReengaged(t, s.provider, rotatingName, firstRotating, waitTimeout)
	waitEvent(t, ns, "rotating", kit.ReasonCredentialsRotated)
	for _, m := range marked {
		if m.Reason != kit.ReasonUnauthorized {
			continue
		}
		if err := writeKubeconfigSecret(t.Context(), ns, "rotating", m.Kubeconfig); err != nil {
			t.Fatal(err)
		}
		waitEvent(t, ns, "rotating", kit.ReasonUnauthorized)
		break
	}

	// The provider's API about members that are not engaged.
	for _, name := range []string{"userinfo", "proxy", "refused", "secret-0"} {
		_, err := s.provider.Get(t.Context(), clusterprofile.ClusterName(ns, name))
		if err == nil {
			t.Errorf("Get(%s) of a member with refused credentials succeeded", name)
		}
		leaks.ScanError("Get", err)
		_, err = s.provider.Identity(clusterprofile.ClusterName(ns, name))
		leaks.ScanError("Identity", err)
	}

	// Removal.
	providertest.DeleteAll(t, hub, &v1alpha1.ClusterProfileList{}, client.InNamespace(ns))
	providertest.WaitNoneEngaged(t, s.provider, waitTimeout)

	leaks.Report(t, providertest.LeakReport{
		Logs:   []*providertest.LogBuffer{s.logs},
		Events: []*rest.Config{fleet.Member("hub").Config()},
	})
}
