// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1" //nolint:staticcheck // v1beta1 is supported on purpose (Options.APIVersion).
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/envtest"
	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/clusterapi"
)

func TestEngagesWhenReadyNotBefore(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterapi.Options{})

	c := capiCluster{ns: ns, name: "alpha"}
	writeKubeconfig(t, c, fleet.Member("east").Kubeconfig())
	newCluster(t, ns, c.name, "DockerCluster", nil)
	s.waitDecided(t, c.clusterName(), "the Cluster is not ready")
	if e, n := s.rec.Latest(c.clusterName()); e != nil || n != 0 {
		t.Fatalf("cluster %q engaged before its control plane was initialized", c.clusterName())
	}
	if _, err := s.provider.Get(t.Context(), c.clusterName()); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Fatalf("Get before ready: %v, want ErrClusterNotFound", err)
	}

	setInitialized(t, c, true)
	s.WaitEngaged(t, c.clusterName())
	s.requireReaches(t, c.clusterName(), "east")
	waitEvent(t, c, kit.ReasonClusterEngaged, clusterapi.KubeconfigSecretName(c.name))
	if got := s.provider.ListClusters(); len(got) != 1 || got[0] != c.clusterName() {
		t.Errorf("ListClusters() = %v, want [%s]", got, c.clusterName())
	}
}

// tokenOf returns the bearer token of a kubeconfig's current context.
func tokenOf(t *testing.T, data []byte) string {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken == "" {
		t.Fatal("kubeconfig has no token")
	}
	return cfg.BearerToken
}

func serviceAccountKubeconfig(t *testing.T, member, name string) []byte {
	t.Helper()
	data, err := fleet.Member(member).ServiceAccountKubeconfig(t.Context(), envtest.ServiceAccountOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRotationReengagesMetadataDoesNot(t *testing.T) {
	ns := namespace(t)
	r := &providertest.Calls{}
	s := start(t, ns, clusterapi.Options{IsReady: providertest.Counted(r, clusterapi.ControlPlaneInitialized)})

	first := serviceAccountKubeconfig(t, "east", ns+"-first")
	c := capiCluster{ns: ns, name: "rot"}
	writeKubeconfig(t, c, first)
	newCluster(t, ns, c.name, "DockerCluster", nil)
	setInitialized(t, c, true)
	old := s.WaitEngaged(t, c.clusterName())
	if got := providertest.BearerTokenOf(t, old.Cluster.GetConfig()); got != tokenOf(t, first) {
		t.Fatal("the engaged cluster does not use the Secret's credentials")
	}

	// Metadata-only changes of the Secret and the Cluster: looked at, not re-engaged.
	before := r.Count(c.name)
	secret := &corev1.Secret{}
	if err := mgmt.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: clusterapi.KubeconfigSecretName(c.name)}, secret); err != nil {
		t.Fatal(err)
	}
	secret.Annotations = map[string]string{"touched": "yes"}
	if err := mgmt.Update(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	r.WaitMore(t, c.name, before, waitTimeout)
	before = r.Count(c.name)
	obj := &clusterv1.Cluster{}
	if err := mgmt.Get(t.Context(), c.key(), obj); err != nil {
		t.Fatal(err)
	}
	obj.Labels = map[string]string{"touched": "yes"}
	if err := mgmt.Update(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	r.WaitMore(t, c.name, before, waitTimeout)

	// Rotation: only the Secret changes, and the cluster is engaged again at once.
	second := serviceAccountKubeconfig(t, "east", ns+"-second")
	writeKubeconfig(t, c, second)
	var next *engagement
	eventually(t, "re-engaged with the new credentials", func() error {
		e, _ := s.rec.Latest(c.clusterName())
		if e == nil || e == old || e.Ctx.Err() != nil {
			return errors.New("no new engagement")
		}
		next = e
		return nil
	})
	s.waitDisengagedInstance(t, old)
	if got := providertest.BearerTokenOf(t, next.Cluster.GetConfig()); got != tokenOf(t, second) {
		t.Error("the re-engaged cluster does not use the new credentials")
	}
	if _, n := s.rec.Latest(c.clusterName()); n != 2 {
		t.Errorf("cluster engaged %d times, want 2: metadata-only changes must not re-engage", n)
	}
	if cl, err := s.provider.Get(t.Context(), c.clusterName()); err != nil || cl != next.Cluster {
		t.Errorf("Get = %v, %v; want the re-engaged instance", cl, err)
	}
	s.requireReaches(t, c.clusterName(), "east")
	waitEvent(t, c, kit.ReasonCredentialsRotated)
}

// waitDisengagedInstance waits until the engage context of one instance ends.
func (s *started) waitDisengagedInstance(t *testing.T, e *engagement) {
	t.Helper()
	eventually(t, "old instance disengaged", func() error {
		if e.Ctx.Err() == nil {
			return errors.New("engage context still alive")
		}
		return nil
	})
}

func TestDeletionDisengages(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterapi.Options{})

	// Deletion started (a finalizer holds the object): disengaged at once.
	held := readyCluster(t, ns, "held", "east")
	gone := readyCluster(t, ns, "gone", "west")
	eHeld := s.WaitEngaged(t, held.clusterName())
	eGone := s.WaitEngaged(t, gone.clusterName())

	obj := &clusterv1.Cluster{}
	if err := mgmt.Get(t.Context(), held.key(), obj); err != nil {
		t.Fatal(err)
	}
	obj.Finalizers = []string{clusterv1.ClusterFinalizer}
	if err := mgmt.Update(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	if err := mgmt.Delete(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	s.WaitDisengaged(t, held.clusterName(), eHeld)
	if err := mgmt.Get(t.Context(), held.key(), obj); err != nil || obj.DeletionTimestamp == nil {
		t.Fatalf("the held Cluster should still exist with a deletionTimestamp: %v", err)
	}
	if eGone.Ctx.Err() != nil {
		t.Fatal("deleting one Cluster disengaged another")
	}
	obj.Finalizers = nil
	if err := mgmt.Update(t.Context(), obj); err != nil {
		t.Fatal(err)
	}

	// Gone for good.
	if err := mgmt.Delete(t.Context(), &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: gone.ns, Name: gone.name}}); err != nil {
		t.Fatal(err)
	}
	s.WaitDisengaged(t, gone.clusterName(), eGone)
	if got := s.provider.ListClusters(); len(got) != 0 {
		t.Errorf("ListClusters() = %v after deleting every Cluster", got)
	}
}

func TestUnreadyDisengagesReadyEngagesAgain(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterapi.Options{})
	c := readyCluster(t, ns, "flaky", "east")
	first := s.WaitEngaged(t, c.clusterName())

	setInitialized(t, c, false)
	s.WaitDisengaged(t, c.clusterName(), first)
	waitEvent(t, c, kit.ReasonClusterDisengaged, "not ready")

	setInitialized(t, c, true)
	again := s.WaitEngaged(t, c.clusterName())
	if again == first {
		t.Fatal("the disengaged instance was engaged again; want a new one")
	}
	s.requireReaches(t, c.clusterName(), "east")
}

func TestControlPlaneAvailableReadiness(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterapi.Options{IsReady: clusterapi.ControlPlaneAvailable})
	c := readyCluster(t, ns, "avail", "east")
	s.waitDecided(t, c.clusterName(), "the Cluster is not ready")

	setCondition := func(status metav1.ConditionStatus) {
		eventually(t, "setting ControlPlaneAvailable", func() error {
			obj := &clusterv1.Cluster{}
			if err := mgmt.Get(t.Context(), c.key(), obj); err != nil {
				return err
			}
			obj.Status.Conditions = []metav1.Condition{{
				Type: clusterv1.ClusterControlPlaneAvailableCondition, Status: status,
				Reason: "Test", LastTransitionTime: metav1.Now(),
			}}
			return mgmt.Status().Update(t.Context(), obj)
		})
	}
	setCondition(metav1.ConditionTrue)
	e := s.WaitEngaged(t, c.clusterName())
	setCondition(metav1.ConditionFalse)
	s.WaitDisengaged(t, c.clusterName(), e)
}

func TestV1Beta1(t *testing.T) {
	ns := namespace(t)
	r := &providertest.Calls{}
	s := start(t, ns, clusterapi.Options{APIVersion: clusterapi.V1Beta1, IsReady: providertest.Counted(r, clusterapi.ControlPlaneInitialized)})

	// Cluster API stores v1beta2; the provider reads v1beta1 through the conversion webhook, as
	// against a real Cluster API v1.14 management cluster.
	c := capiCluster{ns: ns, name: "old"}
	writeKubeconfig(t, c, fleet.Member("west").Kubeconfig())
	newCluster(t, ns, c.name, "DockerCluster", nil)
	s.waitDecided(t, c.clusterName(), "the Cluster is not ready")
	if got, want := r.TypeOf(c.name), fmt.Sprintf("%T", &clusterv1beta1.Cluster{}); got != want {
		t.Fatalf("IsReady got a %s, want %s", got, want)
	}
	setInitialized(t, c, true)
	e := s.WaitEngaged(t, c.clusterName())
	s.requireReaches(t, c.clusterName(), "west")

	// The v1beta1 view of the same object says status.controlPlaneReady.
	v1b1 := &clusterv1beta1.Cluster{}
	if err := mgmt.Get(t.Context(), c.key(), v1b1); err != nil {
		t.Fatal(err)
	}
	if !v1b1.Status.ControlPlaneReady {
		t.Error("v1beta1 status.controlPlaneReady is false for an initialized Cluster")
	}

	setInitialized(t, c, false)
	s.WaitDisengaged(t, c.clusterName(), e)
}

func TestPredicates(t *testing.T) {
	ns := namespace(t)
	other := namespace(t)
	s := start(t, ns, clusterapi.Options{
		Selector:            labels.SelectorFromSet(labels.Set{"fleet": "yes"}),
		InfrastructureKinds: []string{"DockerCluster"},
		Filter: func(_ context.Context, obj client.Object) bool {
			return obj.GetName() != "filtered"
		},
	})
	yes := map[string]string{"fleet": "yes"}
	create := func(ns, name, infra string, labels map[string]string) capiCluster {
		c := capiCluster{ns: ns, name: name}
		writeKubeconfig(t, c, fleet.Member("east").Kubeconfig())
		newCluster(t, ns, name, infra, labels)
		setInitialized(t, c, true)
		return c
	}
	outside := create(other, "outside", "DockerCluster", yes)
	unlabeled := create(ns, "unlabeled", "DockerCluster", nil)
	otherInfra := create(ns, "aws", "AWSCluster", yes)
	filtered := create(ns, "filtered", "DockerCluster", yes)
	match := create(ns, "match", "DockerCluster", yes)

	e := s.WaitEngaged(t, match.clusterName())
	for _, c := range []capiCluster{unlabeled, otherInfra, filtered} {
		s.waitDecided(t, c.clusterName(), "the Cluster is not selected by the provider's options")
	}
	// The Cluster of the other namespace is not even in the provider's cache; it was created
	// before the matching one, so it would have been engaged by now.
	for _, c := range []capiCluster{unlabeled, otherInfra, filtered, outside} {
		if e, _ := s.rec.Latest(c.clusterName()); e != nil {
			t.Errorf("cluster %q engaged, but the options do not select it", c.clusterName())
		}
	}

	// Losing the label disengages.
	obj := &clusterv1.Cluster{}
	if err := mgmt.Get(t.Context(), match.key(), obj); err != nil {
		t.Fatal(err)
	}
	obj.Labels = nil
	if err := mgmt.Update(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	s.WaitDisengaged(t, match.clusterName(), e)
	waitEvent(t, match, kit.ReasonClusterDisengaged, "not selected")
}

// execKubeconfig returns a kubeconfig for member that gets its token from an exec plugin.
func execKubeconfig(t *testing.T, member string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(fleet.Member(member).Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuthInfos[member] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: "get-token", InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// withServer returns member's kubeconfig pointed at another server address.
func withServer(t *testing.T, member, server string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(fleet.Member(member).Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters[member].Server = server
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// withToken returns member's kubeconfig with a token the member does not know.
func withToken(t *testing.T, member, token string) []byte {
	t.Helper()
	cfg, err := clientcmd.Load(fleet.Member(member).Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuthInfos[member] = &clientcmdapi.AuthInfo{Token: token}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBrokenClustersDoNotBlockOthers(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterapi.Options{Options: kit.Options{CacheSyncTimeout: 5 * time.Second}})
	execErrors := testutil.ToFloat64(clusterapi.Errors.WithLabelValues(kubeconfig.ReasonExecPlugin))

	good := readyCluster(t, ns, "good", "east")
	broken := map[string]capiCluster{}
	for name, data := range map[string][]byte{
		"exec":         execKubeconfig(t, "west"),
		"garbage":      []byte("this is not a kubeconfig: ["),
		"unauthorized": withToken(t, "west", "not-a-valid-token"),
		"unreachable":  withServer(t, "west", "https://127.0.0.1:1"),
	} {
		c := capiCluster{ns: ns, name: name}
		writeKubeconfig(t, c, data)
		newCluster(t, ns, name, "DockerCluster", nil)
		setInitialized(t, c, true)
		broken[name] = c
	}
	missing := capiCluster{ns: ns, name: "missing"}
	newCluster(t, ns, missing.name, "DockerCluster", nil)
	setInitialized(t, missing, true)

	eGood := s.WaitEngaged(t, good.clusterName())
	note := waitEvent(t, broken["exec"], kit.ReasonInvalidKubeconfig, "AllowExec")
	if strings.Contains(note, "get-token") {
		t.Errorf("the Event quotes the kubeconfig: %q", note)
	}
	waitEvent(t, broken["garbage"], kit.ReasonInvalidKubeconfig, clusterapi.KubeconfigSecretName("garbage"))
	waitEvent(t, broken["unauthorized"], kit.ReasonUnauthorized)
	waitEvent(t, broken["unreachable"], kit.ReasonClusterUnreachable, "127.0.0.1:1")
	waitEvent(t, missing, clusterapi.ReasonKubeconfigSecretMissing, clusterapi.KubeconfigSecretName("missing"))
	if got := testutil.ToFloat64(clusterapi.Errors.WithLabelValues(kubeconfig.ReasonExecPlugin)); got <= execErrors {
		t.Errorf("mcr_clusterapi_provider_errors_total{reason=ExecPlugin} = %v, want more than %v", got, execErrors)
	}
	if testutil.ToFloat64(clusterapi.BrokenClusters) < 5 {
		t.Errorf("mcr_clusterapi_provider_broken_clusters = %v, want at least 5", testutil.ToFloat64(clusterapi.BrokenClusters))
	}
	if _, err := s.logs.Find(`"cluster"="`+string(broken["exec"].clusterName())+`"`, "Cluster cannot be engaged"); err != nil {
		t.Error(err)
	}
	for _, c := range broken {
		if e, _ := s.rec.Latest(c.clusterName()); e != nil {
			t.Errorf("broken cluster %q engaged", c.clusterName())
		}
	}
	if eGood.Ctx.Err() != nil {
		t.Fatal("the good cluster was disengaged while others failed")
	}

	// Fixing a broken Secret engages its cluster; so does creating a missing one.
	writeKubeconfig(t, broken["garbage"], fleet.Member("west").Kubeconfig())
	writeKubeconfig(t, missing, fleet.Member("west").Kubeconfig())
	s.WaitEngaged(t, broken["garbage"].clusterName())
	s.WaitEngaged(t, missing.clusterName())
	s.requireReaches(t, missing.clusterName(), "west")

	// A broken rotation keeps the working credentials engaged.
	before := waitEventCount(t, good, kit.ReasonInvalidKubeconfig)
	writeKubeconfig(t, good, []byte("garbage again: ["))
	eventually(t, "InvalidKubeconfig Event on the good Cluster", func() error {
		n, err := events(t.Context(), good, kit.ReasonInvalidKubeconfig)
		if err != nil || len(n) <= before {
			return fmt.Errorf("%d Events (%v)", len(n), err)
		}
		return nil
	})
	if e, n := s.rec.Latest(good.clusterName()); e != eGood || n != 1 || eGood.Ctx.Err() != nil {
		t.Fatal("a broken kubeconfig replaced or disengaged the working cluster")
	}
	s.requireReaches(t, good.clusterName(), "east")
}

func waitEventCount(t *testing.T, c capiCluster, reason string) int {
	t.Helper()
	notes, err := events(t.Context(), c, reason)
	if err != nil {
		t.Fatal(err)
	}
	return len(notes)
}

func TestPolicyAllowsExecWhenEnabled(t *testing.T) {
	ns := namespace(t)
	s := start(t, ns, clusterapi.Options{Options: kit.Options{Policy: kubeconfig.Policy{AllowExec: true}}})
	c := capiCluster{ns: ns, name: "exec"}
	writeKubeconfig(t, c, execKubeconfig(t, "west"))
	newCluster(t, ns, c.name, "DockerCluster", nil)
	setInitialized(t, c, true)
	// Accepted by the policy, the plugin then fails to run: the failure is the plugin's, not
	// the kubeconfig's.
	waitEvent(t, c, kit.ReasonCredentialPluginFailed)
	if notes, err := events(t.Context(), c, kit.ReasonInvalidKubeconfig); err != nil || len(notes) != 0 {
		t.Errorf("InvalidKubeconfig Events %q (%v) although the policy allows exec", notes, err)
	}
	if e, _ := s.rec.Latest(c.clusterName()); e != nil {
		t.Error("engaged a cluster whose credential plugin cannot run")
	}
}

func TestNewForHost(t *testing.T) {
	ns := namespace(t)
	host, err := cluster.New(fleet.Member("mgmt").Config(), func(o *cluster.Options) { o.Scheme = scheme })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = host.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	// The shared cache holds every namespace; the provider serves only its own. The Cluster
	// elsewhere exists before the provider starts, so it is in the first listing it handles.
	elsewhere := readyCluster(t, namespace(t), "elsewhere", "east")
	logs := &logBuffer{}
	p, err := clusterapi.NewForHost(host, clusterapi.Options{Namespaces: []string{ns}, Options: kit.Options{Logger: logs.Logger()}})
	if err != nil {
		t.Fatal(err)
	}
	s := runProvider(t, p, logs)
	c := readyCluster(t, ns, "shared", "west")
	s.WaitEngaged(t, c.clusterName())
	s.requireReaches(t, c.clusterName(), "west")
	if got := p.ListClusters(); len(got) != 1 {
		t.Errorf("ListClusters() = %v, want only %s (not %s)", got, c.clusterName(), elsewhere.clusterName())
	}
}

func TestStartFailsWithoutCRDs(t *testing.T) {
	// The workload clusters have no Cluster API CRDs: Start must fail, not hang.
	p, err := clusterapi.New(fleet.Member("north").Config(), clusterapi.Options{Options: kit.Options{CacheSyncTimeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	err = p.Start(ctx, providertest.NewRecorder())
	if err == nil || ctx.Err() != nil {
		t.Fatalf("Start = %v (ctx %v), want an error about the missing CRDs", err, ctx.Err())
	}
	if !strings.Contains(err.Error(), "CRDs") {
		t.Errorf("Start error %q does not point at the CRDs", err)
	}
}

func TestNames(t *testing.T) {
	if got := clusterapi.ClusterName("fleet", "east"); got != "fleet/east" {
		t.Errorf("ClusterName = %q", got)
	}
	key, err := clusterapi.ClusterKey("fleet/east")
	if err != nil || key.Namespace != "fleet" || key.Name != "east" {
		t.Errorf("ClusterKey = %v, %v", key, err)
	}
	for _, bad := range []multicluster.ClusterName{"", "east", "/east", "fleet/", "a/b/c"} {
		if _, err := clusterapi.ClusterKey(bad); err == nil {
			t.Errorf("ClusterKey(%q) succeeded", bad)
		}
	}
	if got := clusterapi.KubeconfigSecretName("east"); got != "east-kubeconfig" {
		t.Errorf("KubeconfigSecretName = %q", got)
	}
	if _, err := clusterapi.New(nil, clusterapi.Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := clusterapi.New(fleet.Member("mgmt").Config(), clusterapi.Options{APIVersion: "v1alpha3"}); err == nil {
		t.Error("New with an unknown APIVersion succeeded")
	}
}
