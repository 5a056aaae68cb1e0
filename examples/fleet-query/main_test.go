// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
	"mcr.dev/examples/internal/exampletest"
)

var testFleet *envtest.Fleet

func TestMain(m *testing.M) {
	os.Exit(exampletest.Main(m, &testFleet, "fleet-a", "fleet-b", "fleet-c"))
}

// The file provider's names of the members.
const (
	clusterA = "fleet-a.kubeconfig+fleet-a"
	clusterB = "fleet-b.kubeconfig+fleet-b"
	clusterC = "fleet-c.kubeconfig+fleet-c"
)

const (
	v12 = "registry.example/app:v1.2"
	v13 = "registry.example/app:v1.3"
)

// Across three members with Deployments of v1.2 and v1.3, the answer lists exactly the v1.2
// Deployments, each with its cluster; -l and -clusters narrow it.
func TestQuery(t *testing.T) {
	ns := "query"
	team := map[string]string{"team": "query"}
	seed(t, "fleet-a", ns, deployment(ns, "one", v12, team), deployment(ns, "two", v13, team))
	seed(t, "fleet-b", ns, deployment(ns, "one", v13, team))
	seed(t, "fleet-c", ns, deployment(ns, "one", v12, team), deployment(ns, "two", v12, nil))
	dir := kubeconfigs(t)

	out, err := runQuery(t, "-fleet", dir, "-image", v12)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantRows(t, out, clusterA+" query one", clusterC+" query one", clusterC+" query two")

	out, err = runQuery(t, "-fleet", dir, "-image", v12, "-l", "team=query")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantRows(t, out, clusterA+" query one", clusterC+" query one")

	out, err = runQuery(t, "-fleet", dir, "-image", v13, "-clusters", clusterA+","+clusterC)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantRows(t, out, clusterA+" query two")

	// A name that is no member is not asked: said so, not silently left out.
	out, err = runQuery(t, "-fleet", dir, "-image", v12, "-clusters", clusterA+",fleet-x")
	if !errors.Is(err, errPartial) || !regexp.MustCompile(`(?m)^fleet-x +not a member of the fleet$`).MatchString(out) {
		t.Errorf("error %v; the output does not name fleet-x as no member:\n%s", err, out)
	}
	wantRows(t, out, clusterA+" query one")
}

// The demo's script on the test's fleet: the third member's API server is stopped once it is
// engaged, and the answer lists the other two members' Deployments of the image and names the
// third as not asked, in the output and the error. Asked again while it is still down, the
// provider cannot engage it: it is named all the same.
func TestPartialAnswer(t *testing.T) {
	c := testFleet.Member("fleet-c")
	t.Cleanup(func() {
		if err := c.Start(context.Background()); err != nil {
			t.Error(err)
		}
	})
	o, err := parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = demo(t.Context(), testFleet, o, &out)
	wantPartial(t, err, out.String(), "connection refused")
	wantRows(t, out.String(), clusterA+" shop web", clusterB+" shop web-legacy")
	if c.Running() {
		t.Fatal("the demo did not stop the third member")
	}

	out2, err := runQuery(t, "-fleet", kubeconfigs(t), "-image", demoImage)
	wantPartial(t, err, out2, "not engaged")
	wantRows(t, out2, clusterA+" shop web", clusterB+" shop web-legacy")
}

// -watch prints the Deployments that run the image, then a line for each change across the
// fleet: a Deployment created in one member, another switched to the image, one deleted.
func TestWatch(t *testing.T) {
	ns := "watch"
	seed(t, "fleet-a", ns, deployment(ns, "app", v12, nil))
	dir := kubeconfigs(t)
	out := &syncBuffer{}
	p := exampletest.Start(t, func(ctx context.Context) error {
		return run(ctx, []string{"-fleet", dir, "-image", v12, "-watch"}, out)
	})
	p.Eventually(t, "the running Deployment", printed(out, `running +`+regexp.QuoteMeta(clusterA)+` +watch/app `))

	b := exampletest.Client(t, testFleet.Member("fleet-b").Config())
	seed(t, "fleet-b", ns, deployment(ns, "new", v12, nil), deployment(ns, "other", v13, nil))
	p.Eventually(t, "the created Deployment", printed(out, `created +`+regexp.QuoteMeta(clusterB)+` +watch/new `))

	other := deployment(ns, "other", v12, nil)
	p.Eventually(t, "switching watch/other to the image", func(ctx context.Context) error {
		current := deployment(ns, "other", "", nil)
		if err := b.Get(ctx, client.ObjectKeyFromObject(current), current); err != nil {
			return err
		}
		current.Spec.Template.Spec = other.Spec.Template.Spec
		return b.Update(ctx, current)
	})
	p.Eventually(t, "the switched Deployment", printed(out, `switched +`+regexp.QuoteMeta(clusterB)+` +watch/other +`+regexp.QuoteMeta(v12)))

	if err := b.Delete(t.Context(), deployment(ns, "new", v12, nil)); err != nil {
		t.Fatal(err)
	}
	p.Eventually(t, "the deleted Deployment", printed(out, `deleted +`+regexp.QuoteMeta(clusterB)+` +watch/new `))
	p.Stop(t)
	if strings.Contains(out.String(), "created  "+clusterB+"  watch/other") {
		t.Errorf("a Deployment of another image was printed:\n%s", out)
	}
}

// runQuery runs the command with args and returns its output and error.
func runQuery(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*exampletest.WaitTimeout)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, args, &out)
	return out.String(), err
}

// kubeconfigs writes the members' kubeconfigs into a new directory and returns it, as -fleet
// takes it.
func kubeconfigs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, m := range testFleet.Members() {
		exampletest.WriteKubeconfig(t, dir, m.Name()+".kubeconfig", m)
	}
	return dir + "/"
}

// seed creates the namespace and the objects in the member, and deletes the objects when the
// test ends.
func seed(t *testing.T, member, namespace string, objs ...client.Object) {
	t.Helper()
	c := exampletest.Client(t, testFleet.Member(member).Config())
	err := c.Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := c.Create(t.Context(), obj); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := c.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
				t.Error(err)
			}
		})
	}
}

// wantRows checks that the answer's table holds exactly the rows "cluster namespace name".
func wantRows(t *testing.T, out string, want ...string) {
	t.Helper()
	var got []string
	table := out[strings.Index(out, "CLUSTER  ")+1:]
	for _, line := range strings.Split(table, "\n")[1:] {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			break
		}
		got = append(got, strings.Join(fields[:3], " "))
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows: got %q, want %q; output:\n%s", got, want, out)
	}
}

// wantPartial checks that err is a partial answer naming the third member, and that the output
// names it as not asked with the reason.
func wantPartial(t *testing.T, err error, out, reason string) {
	t.Helper()
	if !errors.Is(err, errPartial) || !strings.Contains(err.Error(), clusterC) {
		t.Errorf("error: got %v, want a partial answer naming %s", err, clusterC)
	}
	if !regexp.MustCompile(`(?m)^Not asked .*\nCLUSTER +REASON\n` + regexp.QuoteMeta(clusterC) + ` +.*` + reason).MatchString(out) {
		t.Errorf("the output does not name %s as not asked (%s):\n%s", clusterC, reason, out)
	}
}

// printed is a condition for Eventually: the output has a line matching pattern.
func printed(out *syncBuffer, pattern string) func(context.Context) error {
	re := regexp.MustCompile(`(?m)^\S+ +` + pattern)
	return func(context.Context) error {
		if !re.MatchString(out.String()) {
			return fmt.Errorf("no line matches %s in:\n%s", re, out)
		}
		return nil
	}
}

// syncBuffer is a bytes.Buffer the test reads while the command writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
