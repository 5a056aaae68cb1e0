// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"

	"mcr.dev/core/multicluster"
)

// The fuzz targets of the provider's parsers of what others write: the answer of the
// adminkubeconfig subresource (kubeconfig and expiry, from the garden), the kubeconfig of the
// "gardener" Secret (from the seed), the Shoot gardenlet embeds in a Cluster object, and cluster
// names. Seeds are in testdata/fuzz/<FuzzName>; `go test -run=^$ -fuzz=^FuzzX$` runs one.

// fuzzMarker is a credential planted in the fuzzed documents: no error may quote it.
const fuzzMarker = "fuzz-secret-3c9f1b7e"

// fuzzKubeconfig is a valid kubeconfig with the marker as bearer token.
const fuzzKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: shoot
  cluster:
    server: https://api.shoot.example:443
    certificate-authority-data: ` + "Y2EK" + `
users:
- name: admin
  user:
    token: ` + fuzzMarker + `
contexts:
- name: shoot
  context: {cluster: shoot, user: admin}
current-context: shoot
`

// FuzzAdminCredentials: the answer of the adminkubeconfig subresource, as JSON, never makes the
// provider panic; accepted credentials have a kubeconfig, expire after they were requested, and
// are renewed after the request and not after they expire; errors never quote the kubeconfig.
func FuzzAdminCredentials(f *testing.F) {
	answer := func(kubeconfig string, expires time.Time) []byte {
		data, err := json.Marshal(&authenticationv1alpha1.AdminKubeconfigRequest{
			TypeMeta: metav1.TypeMeta{APIVersion: "authentication.gardener.cloud/v1alpha1", Kind: "AdminKubeconfigRequest"},
			Status: authenticationv1alpha1.AdminKubeconfigRequestStatus{
				Kubeconfig: []byte(kubeconfig), ExpirationTimestamp: metav1.NewTime(expires),
			},
		})
		if err != nil {
			f.Fatal(err)
		}
		return data
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Add(answer(fuzzKubeconfig, base.Add(time.Hour)), base.Unix(), 0.8)
	f.Add(answer(fuzzKubeconfig, base.Add(-time.Hour)), base.Unix(), 0.8)
	f.Add(answer("", base.Add(time.Hour)), base.Unix(), 0.5)
	f.Add(answer(fuzzMarker, base.Add(time.Second)), base.Unix(), 0.99)
	f.Add(answer(fuzzKubeconfig, time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)), base.Unix(), 0.8)
	f.Add([]byte(`{"status":{"kubeconfig":"`+fuzzMarker+`","expirationTimestamp":"2026-01-02T04:04:05Z"}}`), base.Unix(), 0.8)
	f.Add([]byte(`{"status":{"kubeconfig":null,"expirationTimestamp":null}}`), int64(0), 0.1)

	shoot := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "shoot", UID: "uid"}}
	f.Fuzz(func(t *testing.T, data []byte, requestedUnix int64, fraction float64) {
		var req authenticationv1alpha1.AdminKubeconfigRequest
		if err := json.Unmarshal(data, &req); err != nil {
			return
		}
		// Options.validate keeps RefreshFraction in (0, 1); a request is made on a sane clock.
		if !(fraction > 0 && fraction < 1) || requestedUnix < 0 || requestedUnix > 1<<37 {
			return
		}
		requested := time.Unix(requestedUnix, 0)
		creds, err := adminCredentialsOf(shoot, &req.Status, requested, fraction)
		if err != nil {
			if strings.Contains(err.Error(), fuzzMarker) {
				t.Fatalf("the error quotes the credentials: %v", err)
			}
			return
		}
		switch {
		case len(creds.kubeconfig) == 0:
			t.Fatal("accepted an answer without kubeconfig")
		case !creds.expires.After(requested):
			t.Fatalf("accepted credentials that expire at %v, requested at %v", creds.expires, requested)
		case creds.renewAt.Before(requested):
			t.Fatalf("renewal at %v, before the request at %v", creds.renewAt, requested)
		case creds.renewAt.After(creds.expires):
			t.Fatalf("renewal at %v, after the expiry at %v", creds.renewAt, creds.expires)
		case creds.epoch != credentialsEpoch(shoot):
			t.Fatal("the credentials are not of the Shoot's epoch")
		}
	})
}

// plantedSecret reports whether the kubeconfig holds the marker once, as the value of a
// credential field; elsewhere (a name, a server) it is no secret and errors may name it.
func plantedSecret(data string) bool {
	before, _, found := strings.Cut(data, fuzzMarker)
	if !found || strings.Count(data, fuzzMarker) != 1 {
		return false
	}
	for _, field := range []string{"token", "client-key-data", "password"} {
		for _, sep := range []string{": ", `":"`, `": "`} {
			if strings.HasSuffix(before, field+sep) {
				return true
			}
		}
	}
	return false
}

// FuzzLoadKubeconfig: kubeconfig bytes of the "gardener" Secret or the adminkubeconfig answer
// never make loadKubeconfig panic; what it accepts has credentials; its errors name fields,
// never values: they never quote a planted credential.
func FuzzLoadKubeconfig(f *testing.F) {
	for _, s := range []string{
		fuzzKubeconfig,
		strings.Replace(fuzzKubeconfig, "token: ", "tokenFile: ", 1),
		strings.Replace(fuzzKubeconfig, "    token: "+fuzzMarker+"\n", "", 1),
		strings.Replace(fuzzKubeconfig, "token: ", "client-key-data: ", 1),
		strings.Replace(fuzzKubeconfig, "token: ", "client-certificate-data: Y2VydAo=\n    client-key-data: ", 1),
		strings.Replace(fuzzKubeconfig, "token: ", "token: [", 1),
		strings.Replace(fuzzKubeconfig, "token: ", "password: ", 1),
		strings.Replace(fuzzKubeconfig, "token: "+fuzzMarker, "{token: "+fuzzMarker+", exec: {command: x}}", 1),
		`{"apiVersion":"v1","kind":"Config","users":[{"name":"u","user":{"token":"` + fuzzMarker + `","exec":{"command":"x"}}}]}`,
		"",
		"\x00" + fuzzMarker,
	} {
		f.Add([]byte(s))
	}
	p := &Provider{}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := p.loadKubeconfig(data)
		if err != nil {
			if plantedSecret(string(data)) && strings.Contains(err.Error(), fuzzMarker) {
				t.Fatalf("the error quotes a value: %v", err)
			}
			return
		}
		if cfg.BearerToken == "" && cfg.BearerTokenFile == "" && len(cfg.CertData) == 0 && cfg.CertFile == "" &&
			cfg.Username == "" && cfg.ExecProvider == nil && cfg.AuthProvider == nil {
			t.Fatal("accepted a kubeconfig without credentials")
		}
	})
}

// FuzzShootOfCluster: the Shoot gardenlet embeds in a Cluster object never makes the provider
// panic, neither decoding it nor working out its epoch, selection and usability.
func FuzzShootOfCluster(f *testing.F) {
	shoot := func(s *gardencorev1beta1.Shoot) []byte {
		data, err := json.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		return data
	}
	now := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	full := &gardencorev1beta1.Shoot{
		TypeMeta:   metav1.TypeMeta{APIVersion: "core.gardener.cloud/v1beta1", Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "garden-dev", Name: "s", UID: "u", Labels: map[string]string{"a": "b"}},
		Spec:       gardencorev1beta1.ShootSpec{Region: "local", Provider: gardencorev1beta1.Provider{Type: "local"}},
		Status: gardencorev1beta1.ShootStatus{
			TechnicalID:         "shoot--dev--s",
			AdvertisedAddresses: []gardencorev1beta1.ShootAdvertisedAddress{{Name: "external", URL: "https://api.s.example"}},
			LastOperation:       &gardencorev1beta1.LastOperation{Type: gardencorev1beta1.LastOperationTypeReconcile, State: gardencorev1beta1.LastOperationStateSucceeded, Progress: 100},
			Conditions: []gardencorev1beta1.Condition{{
				Type: gardencorev1beta1.ShootAPIServerAvailable, Status: gardencorev1beta1.ConditionTrue, LastTransitionTime: now, LastUpdateTime: now,
			}},
			Credentials: &gardencorev1beta1.ShootCredentials{Rotation: &gardencorev1beta1.ShootCredentialsRotation{
				CertificateAuthorities: &gardencorev1beta1.CARotation{Phase: gardencorev1beta1.RotationPreparing, LastInitiationTime: &now},
			}},
		},
	}
	hibernated := full.DeepCopy()
	hibernated.Spec.Hibernation = &gardencorev1beta1.Hibernation{Enabled: new(bool)}
	*hibernated.Spec.Hibernation.Enabled = true
	hibernated.Status.IsHibernated = true
	deleted := full.DeepCopy()
	deleted.DeletionTimestamp = &now
	for _, s := range [][]byte{
		shoot(full), shoot(hibernated), shoot(deleted), shoot(&gardencorev1beta1.Shoot{}),
		[]byte(`null`), []byte(``), []byte(`{"status":{"credentials":{"rotation":{"certificateAuthorities":null}}}}`),
		[]byte(`{"status":{"lastOperation":null,"conditions":[{"type":"APIServerAvailable"}]}}`),
		[]byte(`{"spec":{"hibernation":{"enabled":null}},"status":{"isHibernated":true}}`),
	} {
		f.Add(s)
	}
	p := &Provider{opts: Options{Namespaces: []string{"garden-dev"}, Selector: labels.SelectorFromSet(labels.Set{"a": "b"})}.withDefaults()}
	f.Fuzz(func(t *testing.T, raw []byte) {
		obj := &extensionsv1alpha1.Cluster{Spec: extensionsv1alpha1.ClusterSpec{Shoot: runtime.RawExtension{Raw: raw}}}
		s, err := ShootOfCluster(obj)
		if err != nil {
			return
		}
		if s == nil {
			t.Fatal("ShootOfCluster returned neither a Shoot nor an error")
		}
		if credentialsEpoch(s) != credentialsEpoch(s.DeepCopy()) {
			t.Fatal("credentialsEpoch is not a function of the Shoot")
		}
		ctx := context.Background()
		_ = ShootUsable(ctx, s)
		_ = ShootAwake(ctx, s)
		_ = p.selects(ctx, s)
		_ = ShootProblem(s)
		_ = awakeProblem(s)
	})
}

// FuzzClusterKey: ClusterKey never panics, gives back the key of every name ShootClusterName and
// SeedClusterName make of it, and a key it returns makes the name it was given.
func FuzzClusterKey(f *testing.F) {
	for _, s := range []string{"garden-dev/shoot", "shoot--dev--s", "", "/", "a/", "/a", "a/b/c", "a//b", "\xff/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		key, err := ClusterKey(multicluster.ClusterName(name))
		if err != nil {
			return
		}
		if key.Name == "" {
			t.Fatalf("ClusterKey(%q) = %v: empty name", name, key)
		}
		if got := string(clusterName(key)); got != name {
			t.Fatalf("ClusterKey(%q) = %v, whose cluster name is %q", name, key, got)
		}
	})
}
