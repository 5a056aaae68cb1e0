// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"mcr.dev/core/envtest"
	corekubeconfig "mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kubeconfig"
)

// canListNamespaces proves an engaged cluster reaches its member with working credentials.
func canListNamespaces(ctx context.Context, e *engagement) error {
	var list corev1.NamespaceList
	return e.Cluster.GetClient().List(ctx, &list)
}

// saKubeconfig mints a least-privilege kubeconfig for a ServiceAccount on a member and returns
// it with its token.
func saKubeconfig(t *testing.T, member, saName string) ([]byte, string) {
	t.Helper()
	data, err := fleet.Member(member).ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: saName})
	if err != nil {
		t.Fatalf("minting a kubeconfig for %s on %s: %v", saName, member, err)
	}
	cfg, err := corekubeconfig.Load(data, corekubeconfig.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return data, cfg.BearerToken
}

func TestEngagesSecretOnCreate(t *testing.T) {
	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)

	putSecret(t, ns, "m1", fleet.Member("m1").Kubeconfig())
	e := aware.waitEngaged(t, "m1", 1)
	if err := canListNamespaces(t.Context(), e); err != nil {
		t.Fatalf("engaged cluster cannot reach m1: %v", err)
	}
	got, err := p.Get(t.Context(), "m1")
	if err != nil || got != e.Cluster {
		t.Fatalf("Get(m1) = %v, %v; want the engaged cluster", got, err)
	}
	if names := p.ListClusters(); len(names) != 1 || names[0] != "m1" {
		t.Errorf("ListClusters = %v, want [m1]", names)
	}
	waitEvent(t, ns, "m1", kit.ReasonClusterEngaged)
}

func TestEngagesSecretsThatExistedBeforeStart(t *testing.T) {
	ns := newNamespace(t)
	putSecret(t, ns, "first", fleet.Member("m1").Kubeconfig())
	putSecret(t, ns, "second", fleet.Member("m2").Kubeconfig())
	// Not labeled: must be ignored.
	putSecretWith(t, ns, "unlabeled", nil, map[string][]byte{"kubeconfig": fleet.Member("m1").Kubeconfig()})

	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)

	for _, name := range []multicluster.ClusterName{"first", "second"} {
		if err := canListNamespaces(t.Context(), aware.waitEngaged(t, name, 1)); err != nil {
			t.Errorf("cluster %s: %v", name, err)
		}
	}
	if _, err := p.Get(t.Context(), "unlabeled"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get(unlabeled) = %v, want ErrClusterNotFound", err)
	}
}

func TestMetadataOnlyEditDoesNotReengage(t *testing.T) {
	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)

	putSecret(t, ns, "m1", fleet.Member("m1").Kubeconfig())
	first := aware.waitEngaged(t, "m1", 1)

	s, err := hub.CoreV1().Secrets(ns).Get(t.Context(), "m1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Annotations = map[string]string{"example.com/owner": "team-a"}
	s.Labels["example.com/tier"] = "gold"
	if _, err := hub.CoreV1().Secrets(ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Barrier: the informer delivers events to the provider in order and the queue hands them out
	// in order, so once a Secret created after the edit has been engaged (an access check and a
	// cache sync), the sync caused by the edit (a comparison of the credentials) is long done.
	putSecret(t, ns, "barrier", fleet.Member("m2").Kubeconfig())
	aware.waitEngaged(t, "barrier", 1)

	if aware.count("m1") != 1 || first.Ctx.Err() != nil {
		t.Errorf("metadata-only edit re-engaged m1: %d engagements, first context ended: %v", aware.count("m1"), first.Ctx.Err())
	}
}

func TestRotationReengagesWithNewCredentials(t *testing.T) {
	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)

	oldData, oldToken := saKubeconfig(t, "m2", "rotation-old")
	newData, newToken := saKubeconfig(t, "m2", "rotation-new")
	if oldToken == newToken {
		t.Fatal("the two ServiceAccounts got the same token")
	}

	putSecret(t, ns, "m2", oldData)
	first := aware.waitEngaged(t, "m2", 1)
	if user, err := providertest.UserOf(t.Context(), first.Cluster.GetConfig()); err != nil || !strings.HasSuffix(user, ":rotation-old") {
		t.Fatalf("first engagement does not use the first token: %q, %v", user, err)
	}
	if err := canListNamespaces(t.Context(), first); err != nil {
		t.Fatalf("least-privilege cluster cannot list namespaces: %v", err)
	}

	putSecret(t, ns, "m2", newData)
	second := aware.waitEngaged(t, "m2", 2)
	if second.Cluster == first.Cluster {
		t.Fatal("rotation engaged the same instance")
	}
	if user, err := providertest.UserOf(t.Context(), second.Cluster.GetConfig()); err != nil || !strings.HasSuffix(user, ":rotation-new") {
		t.Fatalf("re-engaged cluster does not use the rotated token: %q, %v", user, err)
	}
	if err := canListNamespaces(t.Context(), second); err != nil {
		t.Fatalf("rotated cluster cannot reach m2: %v", err)
	}
	eventually(t, waitTimeout, "old instance disengaged", func() error { return errors.Join(errNil(first.Ctx.Err() == nil, "old context alive")) })
	if got, err := p.Get(t.Context(), "m2"); err != nil || got != second.Cluster {
		t.Errorf("Get(m2) = %v, %v; want the new instance", got, err)
	}

	// A rotation to credentials the member refuses keeps the working instance engaged.
	const refused = "refused-rotation-token"
	putSecret(t, ns, "m2", editKubeconfig(t, newData, func(cfg *clientcmdapi.Config) {
		for _, u := range cfg.AuthInfos {
			u.Token = refused
		}
	}))
	waitEvent(t, ns, "m2", kit.ReasonUnauthorized)
	if second.Ctx.Err() != nil || aware.count("m2") != 2 {
		t.Error("a rotation to refused credentials disengaged the working instance")
	}
	if got, err := p.Get(t.Context(), "m2"); err != nil || got != second.Cluster {
		t.Errorf("Get(m2) = %v, %v; want the working instance", got, err)
	}
	assertNeverLogged(t, oldToken, newToken, refused)
}

func errNil(failed bool, msg string) error {
	if failed {
		return errors.New(msg)
	}
	return nil
}

func TestDeleteAndLabelRemovalDisengage(t *testing.T) {
	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)

	putSecret(t, ns, "deleted", fleet.Member("m1").Kubeconfig())
	putSecret(t, ns, "unlabeled", fleet.Member("m2").Kubeconfig())
	deleted := aware.waitEngaged(t, "deleted", 1)
	unlabeled := aware.waitEngaged(t, "unlabeled", 1)

	if err := hub.CoreV1().Secrets(ns).Delete(t.Context(), "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	s, err := hub.CoreV1().Secrets(ns).Get(t.Context(), "unlabeled", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(s.Labels, kubeconfig.DefaultSecretLabel)
	if _, err := hub.CoreV1().Secrets(ns).Update(t.Context(), s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	for name, e := range map[multicluster.ClusterName]*engagement{"deleted": deleted, "unlabeled": unlabeled} {
		eventually(t, waitTimeout, fmt.Sprintf("%s disengaged", name), func() error {
			if e.Ctx.Err() == nil {
				return errors.New("engagement context still alive")
			}
			if _, err := p.Get(t.Context(), name); !errors.Is(err, multicluster.ErrClusterNotFound) {
				return fmt.Errorf("Get = %v, want ErrClusterNotFound", err)
			}
			return nil
		})
	}

	// Labeling it again engages it again.
	putSecret(t, ns, "unlabeled", fleet.Member("m2").Kubeconfig())
	aware.waitEngaged(t, "unlabeled", 2)
}

// metricValue returns the value of mcr_kubeconfig_provider_errors_total{reason} as served by
// controller-runtime's registry.
func metricValue(t *testing.T, reason string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mcr_kubeconfig_provider_errors_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func TestRejectsUnsafeKubeconfigs(t *testing.T) {
	const execToken = "exec-plugin-secret-argument"
	good := fleet.Member("m1").Kubeconfig()
	userEdit := func(edit func(u *clientcmdapi.AuthInfo)) []byte {
		return editKubeconfig(t, good, func(cfg *clientcmdapi.Config) { edit(cfg.AuthInfos["m1"]) })
	}
	clusterEdit := func(edit func(c *clientcmdapi.Cluster)) []byte {
		return editKubeconfig(t, good, func(cfg *clientcmdapi.Config) { edit(cfg.Clusters["m1"]) })
	}
	bad := []struct {
		secret  string
		data    []byte
		reason  string // metric reason
		mention string // the note names the Policy field that allows it
	}{
		{"exec", userEdit(func(u *clientcmdapi.AuthInfo) {
			u.ClientCertificateData, u.ClientKeyData = nil, nil
			u.Exec = &clientcmdapi.ExecConfig{APIVersion: "client.authentication.k8s.io/v1", Command: "sh",
				Args: []string{"-c", "echo " + execToken}, InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
		}), corekubeconfig.ReasonExecPlugin, "AllowExec"},
		{"file", clusterEdit(func(c *clientcmdapi.Cluster) {
			c.CertificateAuthorityData, c.CertificateAuthority = nil, "/etc/ssl/certs/ca-certificates.crt"
		}), corekubeconfig.ReasonLocalFile, "AllowLocalFiles"},
		{"token-file", userEdit(func(u *clientcmdapi.AuthInfo) {
			u.ClientCertificateData, u.ClientKeyData = nil, nil
			u.TokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
		}), corekubeconfig.ReasonLocalFile, "AllowLocalFiles"},
		{"insecure", clusterEdit(func(c *clientcmdapi.Cluster) {
			c.CertificateAuthorityData, c.InsecureSkipTLSVerify = nil, true
		}), corekubeconfig.ReasonInsecureTLS, "AllowInsecure"},
		{"garbage", []byte("{{ not a kubeconfig"), corekubeconfig.ReasonInvalid, ""},
	}

	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)

	before := map[string]float64{}
	for _, b := range bad {
		before[b.reason] = metricValue(t, b.reason)
	}
	for _, b := range bad {
		putSecret(t, ns, b.secret, b.data)
	}
	putSecretWith(t, ns, "no-key", map[string]string{kubeconfig.DefaultSecretLabel: "true"}, map[string][]byte{"other": good})
	putSecret(t, ns, "good", good)

	if err := canListNamespaces(t.Context(), aware.waitEngaged(t, "good", 1)); err != nil {
		t.Fatalf("the valid Secret's cluster does not work: %v", err)
	}
	for _, b := range bad {
		note := waitEvent(t, ns, b.secret, kit.ReasonInvalidKubeconfig)
		if !strings.Contains(note, ns+"/"+b.secret) || !strings.Contains(note, b.mention) {
			t.Errorf("Event on %s does not name the Secret and %q: %q", b.secret, b.mention, note)
		}
		if aware.count(multicluster.ClusterName(b.secret)) != 0 {
			t.Errorf("rejected Secret %s was engaged", b.secret)
		}
		if logs.count("Kubeconfig Secret cannot be engaged", `"cluster"="`+b.secret+`"`, b.reason) == 0 {
			t.Errorf("no error log line with cluster %q and reason %s", b.secret, b.reason)
		}
	}
	waitEvent(t, ns, "no-key", kit.ReasonInvalidKubeconfig)
	for reason, n := range before {
		if got := metricValue(t, reason); got <= n {
			t.Errorf("mcr_kubeconfig_provider_errors_total{reason=%q} = %v, want more than %v", reason, got, n)
		}
	}
	if metricValue(t, kubeconfig.ReasonMissingKubeconfig) == 0 {
		t.Error("missing key not counted")
	}
	assertNeverLogged(t, execToken)

	// A rejected Secret that becomes valid is engaged; one that becomes invalid keeps the
	// engaged instance with the credentials that work, and reports the problem.
	putSecret(t, ns, "insecure", good)
	aware.waitEngaged(t, "insecure", 1)
	goodEngagement, _ := aware.current("good")
	putSecret(t, ns, "good", bad[0].data)
	waitEvent(t, ns, "good", kit.ReasonInvalidKubeconfig)
	if goodEngagement.Ctx.Err() != nil || aware.count("good") != 1 {
		t.Error("an invalid kubeconfig disengaged the working instance")
	}
	if got, err := p.Get(t.Context(), "good"); err != nil || got != goodEngagement.Cluster {
		t.Errorf("Get(good) = %v, %v; want the working instance", got, err)
	}
}

func TestPolicyOptionsAllowWhatTheyName(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions(ns)
	opts.Policy = corekubeconfig.Policy{AllowInsecure: true}
	p := newProvider(t, opts)
	aware := newRecordingAware()
	startProvider(t, p, aware)

	insecure := editKubeconfig(t, fleet.Member("m1").Kubeconfig(), func(cfg *clientcmdapi.Config) {
		cfg.Clusters["m1"].CertificateAuthorityData = nil
		cfg.Clusters["m1"].InsecureSkipTLSVerify = true
	})
	putSecret(t, ns, "insecure", insecure)
	if err := canListNamespaces(t.Context(), aware.waitEngaged(t, "insecure", 1)); err != nil {
		t.Fatal(err)
	}
}

func TestNamespacedNamesAndConflicts(t *testing.T) {
	nsA, nsB := newNamespace(t), newNamespace(t)
	// A label of its own, so that Secrets of other tests in other namespaces stay out.
	const label = "test.mcr.dev/all-namespaces"
	labels := map[string]string{label: "true"}
	data := func(m string) map[string][]byte { return map[string][]byte{"kubeconfig": fleet.Member(m).Kubeconfig()} }

	t.Run("namespace/name", func(t *testing.T) {
		opts := testOptions("")
		opts.AllNamespaces, opts.SecretLabel, opts.ClusterName = true, label, kubeconfig.NamespacedSecretName
		p := newProvider(t, opts)
		aware := newRecordingAware()
		startProvider(t, p, aware)

		putSecretWith(t, nsA, "same", labels, data("m1"))
		putSecretWith(t, nsB, "same", labels, data("m2"))
		a := aware.waitEngaged(t, multicluster.ClusterName(nsA+"/same"), 1)
		b := aware.waitEngaged(t, multicluster.ClusterName(nsB+"/same"), 1)
		if a.Cluster.GetConfig().Host != fleet.Member("m1").Host() || b.Cluster.GetConfig().Host != fleet.Member("m2").Host() {
			t.Error("clusters point at the wrong members")
		}
	})

	t.Run("name conflict", func(t *testing.T) {
		opts := testOptions("")
		opts.AllNamespaces, opts.SecretLabel = true, label
		p := newProvider(t, opts)
		aware := newRecordingAware()
		startProvider(t, p, aware)

		first := aware.waitEngaged(t, "same", 1)
		// The second Secret named "same" either lost the race or won it; find out which.
		winner, loser := nsA, nsB
		if first.Cluster.GetConfig().Host == fleet.Member("m2").Host() {
			winner, loser = nsB, nsA
		}
		note := waitEvent(t, loser, "same", kubeconfig.ReasonClusterNameConflict)
		if !strings.Contains(note, winner+"/same") {
			t.Errorf("conflict Event does not name the owner: %q", note)
		}
		if err := hub.CoreV1().Secrets(winner).Delete(t.Context(), "same", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		second := aware.waitEngaged(t, "same", 2)
		if second.Cluster.GetConfig().Host == first.Cluster.GetConfig().Host {
			t.Error("the waiting Secret's cluster was not engaged after the owner went away")
		}
	})
}

// A Secret whose name changes gives up the old name, which a Secret waiting for it then gets;
// a Secret mapped to no name is refused and gives up what it served.
func TestRenamesAndWaitingSecrets(t *testing.T) {
	ns := newNamespace(t)
	const nameLabel = "test.mcr.dev/cluster-name"
	opts := testOptions(ns)
	opts.ClusterName = func(s *corev1.Secret) multicluster.ClusterName {
		return multicluster.ClusterName(s.Labels[nameLabel])
	}
	p := newProvider(t, opts)
	aware := newRecordingAware()
	startProvider(t, p, aware)

	named := func(name string) map[string]string {
		return map[string]string{kubeconfig.DefaultSecretLabel: "true", nameLabel: name}
	}
	data := func(m string) map[string][]byte { return map[string][]byte{"kubeconfig": fleet.Member(m).Kubeconfig()} }

	putSecretWith(t, ns, "a", named("east"), data("m1"))
	east := aware.waitEngaged(t, "east", 1)
	putSecretWith(t, ns, "b", named("east"), data("m2"))
	if note := waitEvent(t, ns, "b", kubeconfig.ReasonClusterNameConflict); !strings.Contains(note, ns+"/a") {
		t.Errorf("conflict Event does not name the owner: %q", note)
	}

	// a moves to west: east is disengaged and goes to b, which waited for it.
	putSecretWith(t, ns, "a", named("west"), data("m1"))
	west := aware.waitEngaged(t, "west", 1)
	if west.Cluster.GetConfig().Host != fleet.Member("m1").Host() {
		t.Error("west does not point at a's member")
	}
	eventually(t, waitTimeout, "east of a disengaged", func() error { return errNil(east.Ctx.Err() == nil, "still engaged") })
	if got := aware.waitEngaged(t, "east", 2); got.Cluster.GetConfig().Host != fleet.Member("m2").Host() {
		t.Error("east was not given to b")
	}
	waitEvent(t, ns, "a", kit.ReasonClusterDisengaged)

	// No name: refused, and west goes.
	putSecretWith(t, ns, "a", named(""), data("m1"))
	waitEvent(t, ns, "a", kit.ReasonClusterSetupFailed)
	eventually(t, waitTimeout, "west disengaged", func() error { return errNil(west.Ctx.Err() == nil, "still engaged") })
	if _, err := p.Get(t.Context(), "west"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get(west) = %v, want ErrClusterNotFound", err)
	}
}

func TestUnreachableMemberDoesNotBlockOthers(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions(ns)
	p := newProvider(t, opts)
	aware := newRecordingAware()
	startProvider(t, p, aware)

	m3 := fleet.Member("m3")
	if err := m3.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = m3.Start(context.Background())
		}
	})

	putSecret(t, ns, "m3", m3.Kubeconfig())
	putSecret(t, ns, "m1", fleet.Member("m1").Kubeconfig())
	aware.waitEngaged(t, "m1", 1)
	// The Event is on the Secret; its note says what the access check found.
	note := waitEvent(t, ns, "m3", kit.ReasonClusterUnreachable)
	if !strings.Contains(note, "the member did not answer") {
		t.Errorf("unreachable Event does not say the member did not answer: %q", note)
	}
	if aware.count("m3") != 0 {
		t.Fatal("unreachable member was engaged")
	}

	// It is retried with backoff and engaged once it is back.
	if err := m3.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if err := canListNamespaces(t.Context(), aware.waitEngaged(t, "m3", 1)); err != nil {
		t.Fatal(err)
	}
}

func TestRefusedCredentialsAreReportedAndNotLogged(t *testing.T) {
	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)

	const bogus = "bogus-token-that-must-never-be-logged"
	data := editKubeconfig(t, fleet.Member("m1").Kubeconfig(), func(cfg *clientcmdapi.Config) {
		cfg.AuthInfos["m1"] = &clientcmdapi.AuthInfo{Token: bogus}
	})
	putSecret(t, ns, "refused", data)
	note := waitEvent(t, ns, "refused", kit.ReasonUnauthorized)
	if strings.Contains(note, bogus) {
		t.Errorf("Event quotes the token: %q", note)
	}
	if aware.count("refused") != 0 {
		t.Error("cluster with refused credentials was engaged")
	}
	if logs.count(`"cluster"="refused"`, kit.ReasonUnauthorized) == 0 {
		t.Error("no log line for the refused credentials")
	}
	assertNeverLogged(t, bogus)
}

func TestIndexFieldAppliesToEngagedClusters(t *testing.T) {
	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)

	if err := p.IndexField(t.Context(), &corev1.ConfigMap{}, "byData", func(o client.Object) []string {
		return []string{o.(*corev1.ConfigMap).Data["k"]}
	}); err != nil {
		t.Fatal(err)
	}
	putSecret(t, ns, "indexed", fleet.Member("m2").Kubeconfig())
	e := aware.waitEngaged(t, "indexed", 1)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "indexed-" + ns, Namespace: "default"}, Data: map[string]string{"k": ns}}
	if err := e.Cluster.GetClient().Create(t.Context(), cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitTimeout, "index query finds the ConfigMap", func() error {
		var list corev1.ConfigMapList
		if err := e.Cluster.GetCache().List(t.Context(), &list, client.MatchingFields{"byData": ns}); err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("found %d ConfigMaps", len(list.Items))
		}
		return nil
	})
}

func TestUpstreamLabelAndKey(t *testing.T) {
	ns := newNamespace(t)
	opts := testOptions(ns)
	opts.SecretLabel, opts.SecretKey = kubeconfig.UpstreamSecretLabel, "config"
	p := newProvider(t, opts)
	aware := newRecordingAware()
	startProvider(t, p, aware)

	putSecretWith(t, ns, "upstream", map[string]string{kubeconfig.UpstreamSecretLabel: "true"}, map[string][]byte{"config": fleet.Member("m1").Kubeconfig()})
	putSecret(t, ns, "ours", fleet.Member("m2").Kubeconfig()) // our default label: not selected
	aware.waitEngaged(t, "upstream", 1)
	if aware.count("ours") != 0 {
		t.Error("a Secret without the configured label was engaged")
	}
}

func TestStartTwiceFails(t *testing.T) {
	ns := newNamespace(t)
	p := newProvider(t, testOptions(ns))
	aware := newRecordingAware()
	startProvider(t, p, aware)
	putSecret(t, ns, "running", fleet.Member("m1").Kubeconfig())
	aware.waitEngaged(t, "running", 1) // the first Start is surely running now
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := p.Start(ctx, newRecordingAware()); err == nil {
		t.Fatal("second Start succeeded")
	}
}
