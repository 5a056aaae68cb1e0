// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package exampletest

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/envtest"
)

// Manifest is the rendered install.yaml of a deployable example (make manifests), decoded.
type Manifest struct {
	Objects []*unstructured.Unstructured
}

// LoadManifest reads the multi-document YAML file at path.
func LoadManifest(t testing.TB, path string) *Manifest {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decoding %s: %v", path, err)
		}
		if len(u.Object) > 0 {
			m.Objects = append(m.Objects, u)
		}
	}
	if len(m.Objects) == 0 {
		t.Fatalf("%s holds no object", path)
	}
	return m
}

// Rule names one PolicyRule of the manifest: the index Index of the rules of the Role or
// ClusterRole Name.
type Rule struct {
	Kind, Name string
	Index      int
}

func (r Rule) String() string { return fmt.Sprintf("%s %s rules[%d]", r.Kind, r.Name, r.Index) }

// Rules lists every PolicyRule of every Role and ClusterRole of the manifest.
func (m *Manifest) Rules(t testing.TB) []Rule {
	t.Helper()
	var out []Rule
	for _, u := range m.Objects {
		if u.GetKind() != "Role" && u.GetKind() != "ClusterRole" {
			continue
		}
		rules, _, err := unstructured.NestedSlice(u.Object, "rules")
		if err != nil {
			t.Fatal(err)
		}
		for i := range rules {
			out = append(out, Rule{Kind: u.GetKind(), Name: u.GetName(), Index: i})
		}
	}
	return out
}

// PolicyRule returns the rule r of the manifest, typed.
func (m *Manifest) PolicyRule(t testing.TB, r Rule) rbacv1.PolicyRule {
	t.Helper()
	for _, u := range m.Objects {
		if u.GetKind() != r.Kind || u.GetName() != r.Name {
			continue
		}
		rules, _, err := unstructured.NestedSlice(u.Object, "rules")
		if err != nil || r.Index >= len(rules) {
			t.Fatalf("%s: not in the manifest (%v)", r, err)
		}
		var out rbacv1.PolicyRule
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rules[r.Index].(map[string]any), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("%s: not in the manifest", r)
	return rbacv1.PolicyRule{}
}

// Without returns a copy of the manifest without the rule r.
func (m *Manifest) Without(t testing.TB, r Rule) *Manifest {
	t.Helper()
	out := &Manifest{}
	found := false
	for _, u := range m.Objects {
		u = u.DeepCopy()
		if u.GetKind() == r.Kind && u.GetName() == r.Name {
			rules, _, err := unstructured.NestedSlice(u.Object, "rules")
			if err != nil || r.Index >= len(rules) {
				t.Fatalf("%s: not in the manifest (%v)", r, err)
			}
			rules = append(rules[:r.Index:r.Index], rules[r.Index+1:]...)
			if err := unstructured.SetNestedSlice(u.Object, rules, "rules"); err != nil {
				t.Fatal(err)
			}
			found = true
		}
		out.Objects = append(out.Objects, u)
	}
	if !found {
		t.Fatalf("%s: not in the manifest", r)
	}
	return out
}

// Apply applies every object of the manifest with server-side apply, as
// `kubectl apply --server-side` does, in the manifest's order (kustomize puts Namespaces first).
func (m *Manifest) Apply(t testing.TB, c client.Client) {
	t.Helper()
	for _, u := range m.Objects {
		if err := c.Apply(t.Context(), client.ApplyConfigurationFromUnstructured(u.DeepCopy()),
			client.FieldOwner("exampletest"), client.ForceOwnership); err != nil {
			t.Fatalf("applying %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
}

// Deployment returns the manifest's only Deployment.
func (m *Manifest) Deployment(t testing.TB) *appsv1.Deployment {
	t.Helper()
	var out *appsv1.Deployment
	for _, u := range m.Objects {
		if u.GetKind() != "Deployment" {
			continue
		}
		if out != nil {
			t.Fatal("the manifest has more than one Deployment")
		}
		out = &appsv1.Deployment{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
			t.Fatal(err)
		}
	}
	if out == nil {
		t.Fatal("the manifest has no Deployment")
	}
	return out
}

// varRef is a $(VAR) reference of a container's args, which the kubelet expands.
var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// ManagerArgs returns the args of the Deployment's container "manager" with the $(VAR)
// references expanded as the kubelet does, for the env vars with a literal value or the pod's
// namespace (fieldRef metadata.namespace), the only kinds the examples use.
func (m *Manifest) ManagerArgs(t testing.TB) []string {
	t.Helper()
	d := m.Deployment(t)
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != "manager" {
			continue
		}
		env := map[string]string{}
		for _, e := range c.Env {
			switch {
			case e.ValueFrom == nil:
				env[e.Name] = e.Value
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				env[e.Name] = d.Namespace
			}
		}
		args := make([]string, 0, len(c.Args))
		for _, a := range c.Args {
			args = append(args, varRef.ReplaceAllStringFunc(a, func(ref string) string {
				name := varRef.FindStringSubmatch(ref)[1]
				v, ok := env[name]
				if !ok {
					t.Fatalf("arg %q refers to $(%s), which the test cannot expand", a, name)
				}
				return v
			}))
		}
		return args
	}
	t.Fatal("the Deployment has no container named manager")
	return nil
}

// ServiceAccountKubeconfig mints a token for the ServiceAccount namespace/name through the
// TokenRequest API, as the kubelet does for a pod, and writes a kubeconfig for member that
// authenticates with that token only. It returns the file's path.
func ServiceAccountKubeconfig(t testing.TB, member *envtest.Member, namespace, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(member.Config())
	if err != nil {
		t.Fatal(err)
	}
	expiration := int64(time.Hour / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiration},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("requesting a token for ServiceAccount %s/%s: %v", namespace, name, err)
	}
	cfg, err := clientcmd.Load(member.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	// Only the token: the admin's client certificate must not come along.
	for user := range cfg.AuthInfos {
		cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// FreeAddress returns a loopback address with a port that was free a moment ago, for an
// endpoint of a program under test that the test then calls.
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// HTTPOK returns a condition for Eventually: GET url answers 200.
func HTTPOK(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
		}
		return nil
	}
}

// BuildFromDockerfile builds the binary the way the Dockerfile's `go build` RUN line does, with
// the build argument PKG set to pkg and the working directory dir (the build context), and
// writes it to out. It parses that line, so the test and the image recipe cannot drift apart,
// and fails the test unless the result is a static executable, which the distroless runtime
// image needs.
func BuildFromDockerfile(t testing.TB, dockerfile, dir, pkg, out string) {
	t.Helper()
	env, args := dockerfileBuild(t, dockerfile, map[string]string{"PKG": pkg, "TARGETOS": "", "TARGETARCH": ""})
	for i := range args {
		if args[i] == "-o" && i+1 < len(args) {
			args[i+1] = out
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s (env %v): %v\n%s", strings.Join(args, " "), env, err, output)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s needs a dynamic loader: not a static binary", out)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Fatalf("%s links shared libraries %v (%v): not a static binary", out, libs, err)
	}
}

// dockerfileBuild returns the environment assignments and the command of the Dockerfile's RUN
// line that runs `go build`, with ${VAR} and ${VAR:-default} expanded from buildArgs.
func dockerfileBuild(t testing.TB, dockerfile string, buildArgs map[string]string) (env, args []string) {
	t.Helper()
	f, err := os.Open(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "RUN" || !strings.Contains(sc.Text(), "go build") {
			continue
		}
		for _, word := range fields[1:] {
			if strings.HasPrefix(word, "--mount=") {
				continue // BuildKit caches: no effect on what is built
			}
			word = os.Expand(word, func(ref string) string {
				name, def, hasDefault := strings.Cut(ref, ":-")
				if v, ok := buildArgs[name]; ok && (v != "" || !hasDefault) {
					return v
				}
				if hasDefault {
					return def
				}
				t.Fatalf("%s: the go build line refers to ${%s}, which is no build argument the test knows", dockerfile, name)
				return ""
			})
			if len(args) == 0 && strings.Contains(word, "=") {
				if !strings.HasSuffix(word, "=") {
					env = append(env, word)
				}
				continue
			}
			args = append(args, word)
		}
		if len(args) < 2 || args[0] != "go" || args[1] != "build" {
			t.Fatalf("%s: cannot read the go build line: %q", dockerfile, sc.Text())
		}
		return env, args
	}
	t.Fatalf("%s has no RUN line with go build", dockerfile)
	return nil, nil
}

// Process is a built example binary running in the background.
type Process struct {
	cmd    *exec.Cmd
	output *syncBuffer
	exited chan struct{}
	err    error
}

// StartProcess runs the binary at path with args. The test's cleanup stops it.
func StartProcess(t testing.TB, path string, args ...string) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(path, args...), output: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p.output, p.output
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	// The test's own checks judge how it ended; here it only must not outlive the test.
	t.Cleanup(func() { _ = p.Stop(t) })
	return p
}

// Output returns what the process wrote to stdout and stderr so far.
func (p *Process) Output() string { return p.output.String() }

// Exited returns an error, with the output, once the process has ended; nil while it runs.
func (p *Process) Exited() error {
	select {
	case <-p.exited:
		return fmt.Errorf("the process ended (%v); output:\n%s", p.err, p.Output())
	default:
		return nil
	}
}

// Stop sends SIGTERM, as a kubelet does, and waits for the process to end; after WaitTimeout
// it kills it and fails the test. It returns the process's error.
func (p *Process) Stop(t testing.TB) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(WaitTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		t.Errorf("the process did not end within %s of SIGTERM; output:\n%s", WaitTimeout, p.Output())
	}
	return p.err
}

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's reads.
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

// Step is one thing a deployed example must do, checked by Cond.
type Step struct {
	// Name is what the step is called in a failure, e.g. "leader election".
	Name string
	// Cond returns nil once the step is done.
	Cond func(context.Context) error
}

// RunSteps checks the steps in order, each within timeout, while p runs. It returns the name of
// the first step not done in time, with its last error, or "" when all are done. A process that
// ends fails the step that was being waited for.
func RunSteps(ctx context.Context, p *Process, timeout time.Duration, steps []Step) (string, error) {
	for _, s := range steps {
		if err := waitStep(ctx, p, timeout, s); err != nil {
			return s.Name, err
		}
	}
	return "", nil
}

func waitStep(ctx context.Context, p *Process, timeout time.Duration, s Step) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := s.Cond(ctx)
		if err == nil {
			return nil
		}
		if exited := p.Exited(); exited != nil {
			return errors.Join(err, exited)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// DeployTest checks a deployable example against its rendered manifest on a real API server.
type DeployTest struct {
	// Manifest is the example's dist/install.yaml.
	Manifest *Manifest
	// Host runs the example: the manifest is applied to it and the ServiceAccount's token is
	// minted there.
	Host *envtest.Member
	// Binary is the example built from its Dockerfile (BuildFromDockerfile).
	Binary string
	// ExtraArgs are appended to the Deployment's args, e.g. to point a mounted path at a local
	// one. Later flags win, so they may override the manifest's.
	ExtraArgs []string
	// Steps are what the example must do, in order; probes is the address of its health probe
	// endpoint.
	Steps func(probes string) []Step
	// Reset, when set, removes what a previous run left before each run.
	Reset func(t *testing.T)
	// Breaks names, for each RBAC rule of the manifest (RuleKey), the step that fails without
	// it. Nil checks only the run with every rule.
	Breaks map[string]string
	// FailWindow is how long a step that should fail without a rule gets before the test takes
	// it as failed. Default: 20s, far beyond what a step takes with every rule.
	FailWindow time.Duration
}

// Run applies the manifest, runs the binary as the Deployment would (its args, the
// ServiceAccount's token and nothing else) and checks that every step is done. With Breaks, it
// then removes each rule in turn and checks that exactly the named step fails, the steps before
// it still passing.
func (d DeployTest) Run(t *testing.T) {
	t.Helper()
	if d.FailWindow == 0 {
		d.FailWindow = 20 * time.Second
	}
	deployment := d.Manifest.Deployment(t)
	admin := Client(t, d.Host.Config())

	run := func(t *testing.T, m *Manifest, timeout time.Duration) (string, error) {
		t.Helper()
		m.Apply(t, admin)
		if d.Reset != nil {
			d.Reset(t)
		}
		kubeconfig := ServiceAccountKubeconfig(t, d.Host, deployment.Namespace, deployment.Spec.Template.Spec.ServiceAccountName)
		probes := FreeAddress(t)
		args := append(d.Manifest.ManagerArgs(t), d.ExtraArgs...)
		args = append(args, "--kubeconfig="+kubeconfig,
			"--metrics-bind-address="+FreeAddress(t), "--health-probe-bind-address="+probes)
		p := StartProcess(t, d.Binary, args...)
		failed, err := RunSteps(t.Context(), p, timeout, d.Steps(probes))
		if stopErr := p.Stop(t); failed == "" && stopErr != nil {
			t.Errorf("the controller did not stop cleanly on SIGTERM: %v; output:\n%s", stopErr, p.Output())
		}
		if failed != "" {
			err = fmt.Errorf("%w\n(controller output:\n%s)", err, p.Output())
		}
		return failed, err
	}

	t.Run("with the manifest's RBAC", func(t *testing.T) {
		if failed, err := run(t, d.Manifest, WaitTimeout); failed != "" {
			t.Fatalf("step %q failed: %v", failed, err)
		}
	})
	if d.Breaks == nil {
		return
	}
	rules := d.Manifest.Rules(t)
	if len(rules) != len(d.Breaks) {
		t.Errorf("the manifest has %d RBAC rules, the test names the step of %d: name the step each rule is for", len(rules), len(d.Breaks))
	}
	for _, rule := range rules {
		key := RuleKey(d.Manifest.PolicyRule(t, rule))
		t.Run("without "+key, func(t *testing.T) {
			want, ok := d.Breaks[key]
			if !ok {
				t.Fatalf("%s (%s): no step named for this rule", rule, key)
			}
			failed, err := run(t, d.Manifest.Without(t, rule), d.FailWindow)
			if failed != want {
				t.Fatalf("without %s: step %q failed, want %q to fail: %v", rule, failed, want, err)
			}
		})
	}
	// Leave the full RBAC in place for the tests that follow.
	d.Manifest.Apply(t, admin)
}

// RuleKey names a rule by its API groups and resources, e.g. "coordination.k8s.io/leases" or
// "/secrets" (the core group).
func RuleKey(r rbacv1.PolicyRule) string {
	return strings.Join(slices.Sorted(slices.Values(r.APIGroups)), ",") + "/" + strings.Join(slices.Sorted(slices.Values(r.Resources)), ",")
}
