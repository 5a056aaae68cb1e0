// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/file"
)

// A directory: every context of every matching file is engaged, also when two files have a
// context of the same name; files that do not match the patterns and hidden files are not read.
func TestEngagesEveryContextOfADirectory(t *testing.T) {
	dir := t.TempDir()
	writeAtomic(t, filepath.Join(dir, "a.kubeconfig"), merged(t, memberConfig(t, "east", "east")))
	writeAtomic(t, filepath.Join(dir, "merged.kubeconfig"), merged(t, memberConfig(t, "west", "east"), memberConfig(t, "west", "west")))
	writeAtomic(t, filepath.Join(dir, "notes.txt"), merged(t, memberConfig(t, "east", "notes")))
	writeAtomic(t, filepath.Join(dir, ".hidden.kubeconfig"), merged(t, memberConfig(t, "east", "hidden")))

	s := start(t, file.Options{Dirs: []string{dir}})
	s.waitEngaged(t, "a.kubeconfig+east", "merged.kubeconfig+east", "merged.kubeconfig+west")
	s.requireReaches(t, "a.kubeconfig+east", "east")
	s.requireReaches(t, "merged.kubeconfig+east", "west")
	s.requireReaches(t, "merged.kubeconfig+west", "west")
}

// A file given directly: every context is engaged, named relative to the file's directory.
func TestEngagesEveryContextOfAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	writeAtomic(t, path, merged(t, memberConfig(t, "east", "kind-east"), memberConfig(t, "west", "kind-west")))

	s := start(t, file.Options{Files: []string{path}})
	s.waitEngaged(t, "config+kind-east", "config+kind-west")
	s.requireReaches(t, "config+kind-east", "east")
	s.requireReaches(t, "config+kind-west", "west")
}

// A glob across directories, including a directory created after the provider started.
func TestGlob(t *testing.T) {
	root := t.TempDir()
	writeAtomic(t, filepath.Join(root, "x", "kubeconfig"), merged(t, memberConfig(t, "east", "east")))
	writeAtomic(t, filepath.Join(root, "y", "kubeconfig"), merged(t, memberConfig(t, "west", "west")))
	writeAtomic(t, filepath.Join(root, "y", "other"), merged(t, memberConfig(t, "west", "other")))

	s := start(t, file.Options{Globs: []string{filepath.Join(root, "*", "kubeconfig")}})
	s.waitEngaged(t, "x/kubeconfig+east", "y/kubeconfig+west")
	before := s.snapshot(t, "x/kubeconfig+east", "y/kubeconfig+west")

	// A new directory that matches: noticed although nothing watched it before.
	writeAtomic(t, filepath.Join(root, "z", "kubeconfig"), merged(t, memberConfig(t, "east", "zed")))
	s.waitEngaged(t, "x/kubeconfig+east", "y/kubeconfig+west", "z/kubeconfig+zed")
	s.requireReaches(t, "z/kubeconfig+zed", "east")
	s.requireUntouched(t, before)
}

// A directory that does not exist when the provider starts is read once it is created.
func TestDirectoryCreatedLater(t *testing.T) {
	root := t.TempDir()
	present := filepath.Join(root, "present")
	later := filepath.Join(root, "later", "fleet")
	writeAtomic(t, filepath.Join(present, "west.kubeconfig"), merged(t, memberConfig(t, "west", "west")))
	s := start(t, file.Options{Dirs: []string{present, later}})
	// The first scan is done once the present directory's cluster is engaged.
	s.waitEngaged(t, "present/west.kubeconfig+west")

	writeAtomic(t, filepath.Join(later, "east.kubeconfig"), merged(t, memberConfig(t, "east", "east")))
	s.waitEngaged(t, "present/west.kubeconfig+west", "later/fleet/east.kubeconfig+east")
	s.requireReaches(t, "later/fleet/east.kubeconfig+east", "east")
}

// Without paths, $KUBECONFIG is read, with its list separator.
func TestKUBECONFIGEnvironment(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one", "config")
	two := filepath.Join(dir, "two", "config")
	writeAtomic(t, one, merged(t, memberConfig(t, "east", "east")))
	writeAtomic(t, two, merged(t, memberConfig(t, "west", "west")))
	t.Setenv("KUBECONFIG", one+string(os.PathListSeparator)+string(os.PathListSeparator)+two)

	s := start(t, file.Options{})
	s.waitEngaged(t, "one/config+east", "two/config+west")
	s.requireReaches(t, "one/config+east", "east")
	s.requireReaches(t, "two/config+west", "west")
}

// The life of a file: contexts added, credentials changed, contexts removed, the file broken and
// fixed, and finally deleted. Only the clusters whose credentials changed are touched.
func TestFileLifecycle(t *testing.T) {
	dir := t.TempDir()
	fleetFile := filepath.Join(dir, "fleet.kubeconfig")
	otherFile := filepath.Join(dir, "other.kubeconfig")
	east := memberConfig(t, "east", "east")
	west := memberConfig(t, "west", "west")
	writeAtomic(t, fleetFile, merged(t, east, west))

	logs := &logBuffer{}
	s := start(t, file.Options{Dirs: []string{dir}, Options: kit.Options{Logger: logs.Logger()}})
	const (
		eastName  = multicluster.ClusterName("fleet.kubeconfig+east")
		westName  = multicluster.ClusterName("fleet.kubeconfig+west")
		northName = multicluster.ClusterName("fleet.kubeconfig+north")
		southName = multicluster.ClusterName("fleet.kubeconfig+south")
		otherName = multicluster.ClusterName("other.kubeconfig+other")
	)
	s.waitEngaged(t, eastName, westName)

	t.Run("change nothing that matters", func(t *testing.T) {
		before := s.snapshot(t, eastName, westName)
		withNamespace := merged(t, east, west)
		cfg, err := clientcmd.Load(withNamespace)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Contexts["east"].Namespace = "kube-system"
		cfg.CurrentContext = "west"
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			t.Fatal(err)
		}
		writeAtomic(t, fleetFile, append([]byte("# a comment, a namespace and another current-context\n"), data...))
		// A context added to another file at the same time shows when the change was read.
		writeAtomic(t, otherFile, merged(t, memberConfig(t, "west", "other")))
		s.waitEngaged(t, eastName, westName, otherName)
		s.requireUntouched(t, before)
		if err := os.Remove(otherFile); err != nil {
			t.Fatal(err)
		}
		s.waitEngaged(t, eastName, westName)
	})

	t.Run("add a context", func(t *testing.T) {
		before := s.snapshot(t, eastName, westName)
		writeAtomic(t, fleetFile, merged(t, east, west, memberConfig(t, "east", "north")))
		s.waitEngaged(t, eastName, westName, northName)
		s.requireReaches(t, northName, "east")
		s.requireUntouched(t, before)
	})

	t.Run("change one context's credentials", func(t *testing.T) {
		before := s.snapshot(t, eastName, westName, northName)
		west = serviceAccountConfig(t, "west", "west")
		writeAtomic(t, fleetFile, merged(t, east, west, memberConfig(t, "east", "north")))
		eventually(t, "west re-engaged", func() error {
			e, _ := s.rec.Latest(westName)
			if e == before[westName] {
				return errors.New("still the old instance")
			}
			return nil
		})
		if before[westName].Ctx.Err() == nil {
			t.Error("the old instance of west is still engaged after the new one was")
		}
		s.waitEngaged(t, eastName, westName, northName)
		cl, _ := s.rec.Latest(westName)
		if user, err := providertest.UserOf(t.Context(), cl.Cluster.GetConfig()); err != nil || !strings.HasPrefix(user, "system:serviceaccount:") {
			t.Errorf("west does not use the ServiceAccount token it was switched to: %q, %v", user, err)
		}
		s.requireReaches(t, westName, "west")
		delete(before, westName)
		s.requireUntouched(t, before)
	})

	t.Run("remove a context", func(t *testing.T) {
		before := s.snapshot(t, eastName, westName, northName)
		writeAtomic(t, fleetFile, merged(t, east, west))
		s.waitEngaged(t, eastName, westName)
		if before[northName].Ctx.Err() == nil {
			t.Error("north's engage context is still alive after its context was removed")
		}
		if _, err := s.provider.Get(context.Background(), northName); !errors.Is(err, multicluster.ErrClusterNotFound) {
			t.Errorf("Get(north) after removal: %v, want ErrClusterNotFound", err)
		}
		delete(before, northName)
		s.requireUntouched(t, before)
	})

	t.Run("broken file", func(t *testing.T) {
		before := s.snapshot(t, eastName, westName)
		errorsBefore := testutil.ToFloat64(file.LoadErrors.WithLabelValues(fleetFile, kubeconfig.ReasonInvalid))
		writeAtomic(t, fleetFile, []byte("apiVersion: v1\nkind: Config\nclusters: [\n  this is not yaml"))
		eventually(t, "error logged with the file", func() error {
			_, err := logs.Find("Cannot use kubeconfig file", fleetFile)
			return err
		})
		if got := testutil.ToFloat64(file.LoadErrors.WithLabelValues(fleetFile, kubeconfig.ReasonInvalid)); got <= errorsBefore {
			t.Errorf("mcr_file_provider_load_errors_total for %s did not grow (%v)", fleetFile, got)
		}
		// The rest of the fleet keeps working: another file is still picked up.
		writeAtomic(t, otherFile, merged(t, memberConfig(t, "west", "other")))
		s.waitEngaged(t, eastName, westName, otherName)
		s.requireUntouched(t, before)

		// Fixed, with one more context: read as usual, nothing else restarted.
		writeAtomic(t, fleetFile, merged(t, east, west, memberConfig(t, "west", "south")))
		s.waitEngaged(t, eastName, westName, southName, otherName)
		s.requireReaches(t, southName, "west")
		s.requireUntouched(t, before)
		eventually(t, "recovery logged", func() error {
			_, err := logs.Find("Kubeconfig file problem resolved", fleetFile)
			return err
		})
	})

	t.Run("delete the file", func(t *testing.T) {
		before := s.snapshot(t, eastName, westName, southName, otherName)
		if err := os.Remove(fleetFile); err != nil {
			t.Fatal(err)
		}
		s.waitEngaged(t, otherName)
		for _, name := range []multicluster.ClusterName{eastName, westName, southName} {
			if before[name].Ctx.Err() == nil {
				t.Errorf("%s is still engaged after its file was deleted", name)
			}
		}
		s.requireUntouched(t, map[multicluster.ClusterName]*engagement{otherName: before[otherName]})
	})
}

// A file broken from the start neither fails Start nor stops the other files, and is picked up
// once fixed, even when it was fixed by writing it in place (as editors without atomic save do).
func TestBrokenFileAtStartup(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.kubeconfig")
	bad := filepath.Join(dir, "bad.kubeconfig")
	writeAtomic(t, good, merged(t, memberConfig(t, "east", "east")))
	writeAtomic(t, bad, []byte("{{{"))

	logs := &logBuffer{}
	s := start(t, file.Options{Dirs: []string{dir}, Options: kit.Options{Logger: logs.Logger()}})
	s.waitEngaged(t, "good.kubeconfig+east")
	eventually(t, "error logged with the file", func() error {
		_, err := logs.Find("Cannot use kubeconfig file", bad)
		return err
	})
	if got := testutil.ToFloat64(file.BrokenFiles); got < 1 {
		t.Errorf("mcr_file_provider_broken_files = %v, want at least 1", got)
	}
	before := s.snapshot(t, "good.kubeconfig+east")

	if err := os.WriteFile(bad, merged(t, memberConfig(t, "west", "west")), 0o600); err != nil {
		t.Fatal(err)
	}
	s.waitEngaged(t, "good.kubeconfig+east", "bad.kubeconfig+west")
	s.requireUntouched(t, before)
}

// Editors that save by writing a new file and renaming it over the old one.
func TestAtomicRename(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.kubeconfig")
	writeAtomic(t, path, merged(t, memberConfig(t, "east", "east"), memberConfig(t, "west", "west")))

	s := start(t, file.Options{Files: []string{path}})
	s.waitEngaged(t, "fleet.kubeconfig+east", "fleet.kubeconfig+west")
	before := s.snapshot(t, "fleet.kubeconfig+east", "fleet.kubeconfig+west")

	// vim-style: the old file is moved away, a new one written in its place.
	data := merged(t, memberConfig(t, "east", "east"), serviceAccountConfig(t, "west", "west"))
	if err := os.Rename(path, path+"~"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "west re-engaged", func() error {
		if e, _ := s.rec.Latest("fleet.kubeconfig+west"); e == before["fleet.kubeconfig+west"] {
			return errors.New("still the old instance")
		}
		return nil
	})
	s.waitEngaged(t, "fleet.kubeconfig+east", "fleet.kubeconfig+west")
	s.requireUntouched(t, map[multicluster.ClusterName]*engagement{"fleet.kubeconfig+east": before["fleet.kubeconfig+east"]})
}

// ConfigMap and Secret volumes: the files are symlinks through ..data, which kubelet points at a
// new timestamped directory on every update.
func TestVolumeSymlinkSwap(t *testing.T) {
	mount := t.TempDir()
	publish := func(generation string, data []byte) {
		t.Helper()
		dir := filepath.Join(mount, "..2026_01_01_00_00_00."+generation)
		writeAtomic(t, filepath.Join(dir, "kubeconfig"), data)
		tmp := filepath.Join(mount, "..data_tmp")
		if err := os.Symlink(filepath.Base(dir), tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(mount, "..data")); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(mount, "kubeconfig")
		if _, err := os.Lstat(link); errors.Is(err, os.ErrNotExist) {
			if err := os.Symlink(filepath.Join("..data", "kubeconfig"), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish("1", merged(t, memberConfig(t, "east", "east"), memberConfig(t, "west", "west")))

	// Read both as a directory and as a file: each sees the swap.
	s := start(t, file.Options{Dirs: []string{mount}})
	viaFile := start(t, file.Options{Files: []string{filepath.Join(mount, "kubeconfig")}})
	s.waitEngaged(t, "kubeconfig+east", "kubeconfig+west")
	viaFile.waitEngaged(t, "kubeconfig+east", "kubeconfig+west")
	before := s.snapshot(t, "kubeconfig+east", "kubeconfig+west")
	beforeViaFile := viaFile.snapshot(t, "kubeconfig+east", "kubeconfig+west")

	publish("2", merged(t, memberConfig(t, "east", "east"), serviceAccountConfig(t, "west", "west")))
	if err := os.RemoveAll(filepath.Join(mount, "..2026_01_01_00_00_00.1")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*started{s, viaFile} {
		old := before
		if p == viaFile {
			old = beforeViaFile
		}
		eventually(t, "west re-engaged after the swap", func() error {
			e, _ := p.rec.Latest("kubeconfig+west")
			if e == old["kubeconfig+west"] {
				return errors.New("still the old instance")
			}
			if user, err := providertest.UserOf(t.Context(), e.Cluster.GetConfig()); err != nil || !strings.HasPrefix(user, "system:serviceaccount:") {
				return fmt.Errorf("not with the ServiceAccount token: %q, %v", user, err)
			}
			return nil
		})
		p.waitEngaged(t, "kubeconfig+east", "kubeconfig+west")
		p.requireUntouched(t, map[multicluster.ClusterName]*engagement{"kubeconfig+east": old["kubeconfig+east"]})
	}
}

// Names survive a restart of the provider, and follow the documented scheme.
func TestStableNamesAcrossRestart(t *testing.T) {
	root := t.TempDir()
	prod := filepath.Join(root, "prod")
	staging := filepath.Join(root, "staging")
	// Same file names and context names in two directories, and names containing the separator.
	writeAtomic(t, filepath.Join(prod, "east.kubeconfig"), merged(t, memberConfig(t, "east", "east"), memberConfig(t, "east", "a+b")))
	writeAtomic(t, filepath.Join(staging, "east.kubeconfig"), merged(t, memberConfig(t, "west", "east")))
	writeAtomic(t, filepath.Join(staging, "east+a.kubeconfig"), merged(t, memberConfig(t, "west", "b")))
	want := []multicluster.ClusterName{
		"prod/east.kubeconfig+a+b",
		"prod/east.kubeconfig+east",
		"staging/east%2Ba.kubeconfig+b",
		"staging/east.kubeconfig+east",
	}
	opts := file.Options{Dirs: []string{staging, prod}}

	first := start(t, opts)
	first.waitEngaged(t, want...)
	first.stop()
	if got := first.rec.Engaged(); len(got) != 0 {
		t.Errorf("still engaged after Start returned: %v", got)
	}

	// Discovery order must not matter either: the options list the directories the other way.
	second := start(t, file.Options{Dirs: []string{prod, staging}})
	second.waitEngaged(t, want...)
	second.requireReaches(t, "staging/east%2Ba.kubeconfig+b", "west")
	second.requireReaches(t, "prod/east.kubeconfig+a+b", "east")
}

// A context whose server does not answer is not engaged (the access check refuses it, as in every
// provider on the kit): it is reported unreachable once and retried with backoff, and it never
// holds up the other clusters.
func TestUnreachableClusterDoesNotBlockOthers(t *testing.T) {
	dir := t.TempDir()
	dead := memberConfig(t, "east", "dead")
	dead.Clusters["dead"].Server = "https://127.0.0.1:1"
	writeAtomic(t, filepath.Join(dir, "fleet.kubeconfig"), merged(t, dead, memberConfig(t, "east", "east"), memberConfig(t, "west", "west")))

	logs := &logBuffer{}
	s := start(t, file.Options{Dirs: []string{dir}, Options: kit.Options{
		CacheSyncTimeout: 2 * time.Second, RetryMinDelay: 100 * time.Millisecond, Logger: logs.Logger(),
	}})
	s.waitEngaged(t, "fleet.kubeconfig+east", "fleet.kubeconfig+west")
	s.requireReaches(t, "fleet.kubeconfig+east", "east")
	s.requireReaches(t, "fleet.kubeconfig+west", "west")
	eventually(t, "the unreachable cluster retried", func() error {
		_, err := logs.Find("still cannot be engaged", `"cluster"="fleet.kubeconfig+dead"`, kit.ReasonClusterUnreachable)
		return err
	})
	if n := len(logs.All("Cluster cannot be engaged", `"cluster"="fleet.kubeconfig+dead"`)); n != 1 {
		t.Errorf("the unreachable cluster's problem was logged %d times, want once", n)
	}
	if _, err := s.provider.Get(context.Background(), "fleet.kubeconfig+dead"); !errors.Is(err, multicluster.ErrClusterNotFound) {
		t.Errorf("Get(dead) = %v, want ErrClusterNotFound: an unreachable cluster is not engaged", err)
	}
	s.waitEngaged(t, "fleet.kubeconfig+east", "fleet.kubeconfig+west")
}

// With TrustedPolicy for a configured file, exec plugins and file references work, relative paths
// are relative to the kubeconfig, and a new certificate in a referenced file re-engages the
// cluster.
func TestTrustedPolicy(t *testing.T) {
	dir := t.TempDir()
	east := memberConfig(t, "east", "east")
	cl, user := east.Clusters["east"], east.AuthInfos["east"]
	for name, data := range map[string][]byte{"ca.crt": cl.CertificateAuthorityData, "tls.crt": user.ClientCertificateData, "tls.key": user.ClientKeyData} {
		writeAtomic(t, filepath.Join(dir, "certs", name), data)
	}
	cl.CertificateAuthorityData, cl.CertificateAuthority = nil, filepath.Join("certs", "ca.crt")
	user.ClientCertificateData, user.ClientCertificate = nil, filepath.Join("certs", "tls.crt")
	user.ClientKeyData, user.ClientKey = nil, filepath.Join("certs", "tls.key")

	// An exec plugin that prints the ServiceAccount token of west.
	west := serviceAccountConfig(t, "west", "west")
	token := west.AuthInfos["west"].Token
	credential := fmt.Sprintf(`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":%q}}`, token)
	writeAtomic(t, filepath.Join(dir, "credential.json"), []byte(credential))
	west.AuthInfos["west"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion:      "client.authentication.k8s.io/v1",
		Command:         "cat",
		Args:            []string{filepath.Join(dir, "credential.json")},
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	writeAtomic(t, filepath.Join(dir, "fleet.kubeconfig"), merged(t, east, west))

	s := start(t, file.Options{Files: []string{filepath.Join(dir, "fleet.kubeconfig")}, Options: kit.Options{Policy: file.TrustedPolicy()}})
	s.waitEngaged(t, "fleet.kubeconfig+east", "fleet.kubeconfig+west")
	s.requireReaches(t, "fleet.kubeconfig+east", "east")
	s.requireReaches(t, "fleet.kubeconfig+west", "west")
	before := s.snapshot(t, "fleet.kubeconfig+east", "fleet.kubeconfig+west")

	// Same kubeconfig, new content in the referenced CA file (a bundle now): east is re-engaged.
	writeAtomic(t, filepath.Join(dir, "certs", "ca.crt"), append([]byte("# rotated bundle\n"), fleet.Member("east").Config().CAData...))
	eventually(t, "east re-engaged after its CA file changed", func() error {
		if e, _ := s.rec.Latest("fleet.kubeconfig+east"); e == before["fleet.kubeconfig+east"] {
			return errors.New("still the old instance")
		}
		return nil
	})
	s.waitEngaged(t, "fleet.kubeconfig+east", "fleet.kubeconfig+west")
	s.requireReaches(t, "fleet.kubeconfig+east", "east")
	s.requireUntouched(t, map[multicluster.ClusterName]*engagement{"fleet.kubeconfig+west": before["fleet.kubeconfig+west"]})
}

// By default (the hardened zero Policy), contexts using exec plugins or file references are
// refused with a clear error, and the others are engaged.
func TestHardenedByDefault(t *testing.T) {
	dir := t.TempDir()
	withExec := memberConfig(t, "west", "plugin")
	withExec.AuthInfos["plugin"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: "true",
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	path := filepath.Join(dir, "fleet.kubeconfig")
	writeAtomic(t, path, merged(t, withExec, memberConfig(t, "east", "east")))

	logs := &logBuffer{}
	before := testutil.ToFloat64(file.LoadErrors.WithLabelValues(path, kubeconfig.ReasonExecPlugin))
	s := start(t, file.Options{Dirs: []string{dir}, Options: kit.Options{Logger: logs.Logger()}})
	s.waitEngaged(t, "fleet.kubeconfig+east")
	var line string
	eventually(t, "refusal logged", func() error {
		var err error
		line, err = logs.Find("Cannot use kubeconfig context", "fleet.kubeconfig+plugin")
		return err
	})
	if !strings.Contains(line, "AllowExec") {
		t.Errorf("refusal does not say how to allow it: %q", line)
	}
	if got := testutil.ToFloat64(file.LoadErrors.WithLabelValues(path, kubeconfig.ReasonExecPlugin)); got <= before {
		t.Errorf("mcr_file_provider_load_errors_total{reason=ExecPlugin} did not grow")
	}
}

// Policy applies to the files the operator names (Files); files found through Dirs and Globs are
// read under DiscoveredPolicy, hardened by default whatever Policy is. A file both named and
// discovered is read under Policy.
func TestDiscoveredPolicy(t *testing.T) {
	dir := t.TempDir()
	withExec := memberConfig(t, "west", "plugin")
	withExec.AuthInfos["plugin"] = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: "true",
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}}
	path := filepath.Join(dir, "fleet.kubeconfig")
	writeAtomic(t, path, merged(t, withExec))
	glob := filepath.Join(dir, "*.kubeconfig")
	trusted := file.TrustedPolicy()

	for _, tc := range []struct {
		name    string
		opts    file.Options
		refused bool
	}{
		{"named file, trusted Policy", file.Options{Files: []string{path}, Options: kit.Options{Policy: trusted}}, false},
		{"named file, default Policy", file.Options{Files: []string{path}, DiscoveredPolicy: trusted}, true},
		{"directory, trusted Policy", file.Options{Dirs: []string{dir}, Options: kit.Options{Policy: trusted}}, true},
		{"glob, trusted Policy", file.Options{Globs: []string{glob}, Options: kit.Options{Policy: trusted}}, true},
		{"directory, trusted DiscoveredPolicy", file.Options{Dirs: []string{dir}, DiscoveredPolicy: trusted}, false},
		{"glob, trusted DiscoveredPolicy", file.Options{Globs: []string{glob}, DiscoveredPolicy: trusted}, false},
		{"named and discovered, trusted Policy", file.Options{Files: []string{path}, Dirs: []string{dir}, Options: kit.Options{Policy: trusted}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := file.New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			configs, err := p.ReadConfigs()
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "AllowExec") || len(configs) != 0 {
					t.Errorf("ReadConfigs = %d configs, %v; want the exec plugin refused", len(configs), err)
				}
				return
			}
			if err != nil || len(configs) != 1 {
				t.Errorf("ReadConfigs = %d configs, %v; want the context accepted", len(configs), err)
			}
		})
	}
}

// A context named "" cannot be selected by name (the empty name selects the current context), so
// it is an error of its own instead of a member with another context's credentials.
func TestContextNamedEmpty(t *testing.T) {
	dir := t.TempDir()
	cfg := memberConfig(t, "east", "east")
	cfg.Contexts[""] = cfg.Contexts["east"].DeepCopy()
	writeAtomic(t, filepath.Join(dir, "fleet.kubeconfig"), merged(t, cfg))
	p, err := file.New(file.Options{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	configs, err := p.ReadConfigs()
	if err == nil || !strings.Contains(err.Error(), `context "": `) {
		t.Errorf("ReadConfigs error = %v, want one for the context named \"\"", err)
	}
	if _, ok := configs["fleet.kubeconfig+east"]; !ok || len(configs) != 1 {
		t.Errorf("ReadConfigs = %d configs, want only fleet.kubeconfig+east", len(configs))
	}
}

// ReadConfigs reads the fleet once, for tools that do not run a manager.
func TestReadConfigs(t *testing.T) {
	dir := t.TempDir()
	writeAtomic(t, filepath.Join(dir, "fleet.kubeconfig"), merged(t, memberConfig(t, "east", "east"), memberConfig(t, "west", "west")))
	writeAtomic(t, filepath.Join(dir, "broken.kubeconfig"), []byte("nope: ["))
	p, err := file.New(file.Options{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	configs, err := p.ReadConfigs()
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "broken.kubeconfig")) {
		t.Errorf("ReadConfigs error = %v, want one naming the broken file", err)
	}
	names := make([]multicluster.ClusterName, 0, len(configs))
	for name := range configs {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []multicluster.ClusterName{"fleet.kubeconfig+east", "fleet.kubeconfig+west"}; !slices.Equal(names, want) {
		t.Fatalf("ReadConfigs names = %v, want %v", names, want)
	}
	if got, want := configs["fleet.kubeconfig+west"].Host, fleet.Member("west").Host(); got != want {
		t.Errorf("west host = %s, want %s", got, want)
	}
	// The credentials are complete: the config reaches its apiserver.
	c, err := client.New(configs["fleet.kubeconfig+east"], client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var namespaces corev1.NamespaceList
	if err := c.List(t.Context(), &namespaces); err != nil {
		t.Errorf("listing namespaces with the config ReadConfigs returned: %v", err)
	}
}
