//go:build unix

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"mcr.dev/core/providers/kit"
	"mcr.dev/providers/file"
)

// Special files where kubeconfigs are expected, configured, discovered or referenced: a named
// pipe without a writer (which a plain open would wait on forever), a file over the size limit,
// a directory named like a kubeconfig, a symlink to /dev/zero (which never ends), a socket. Each
// is reported on its own, the good members are engaged, changes keep being picked up, and the
// provider stops promptly.
func TestSpecialFilesAreReportedOnTheirOwn(t *testing.T) {
	root := t.TempDir()
	fleetDir := filepath.Join(root, "fleet")
	explicitDir := filepath.Join(root, "explicit")
	for _, d := range []string{fleetDir, explicitDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	at := func(name string) string { return filepath.Join(fleetDir, name) }
	mkfifo := func(path string) {
		t.Helper()
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(target, path string) {
		t.Helper()
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}

	writeAtomic(t, at("east.kubeconfig"), merged(t, memberConfig(t, "east", "east")))
	mkfifo(at("fifo.kubeconfig"))
	// A usable kubeconfig, padded past the limit: its size alone makes it an error.
	big := merged(t, memberConfig(t, "west", "big"))
	big = append(big, '#')
	big = append(big, bytes.Repeat([]byte{' '}, file.DefaultMaxFileSize)...)
	writeAtomic(t, at("big.kubeconfig"), append(big, '\n'))
	if err := os.Mkdir(at("dir.kubeconfig"), 0o700); err != nil {
		t.Fatal(err)
	}
	symlink("/dev/zero", at("zero.kubeconfig"))
	// Unix socket paths are short; listen in a short directory and link to the socket.
	sockDir, err := os.MkdirTemp("", "mcr-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	l, err := net.Listen("unix", filepath.Join(sockDir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	symlink(filepath.Join(sockDir, "s"), at("socket.kubeconfig"))

	// Referenced files: one context's CA is a pipe, another's token file is /dev/zero; the third
	// context of the same file is fine.
	refs := filepath.Join(root, "refs")
	if err := os.Mkdir(refs, 0o700); err != nil {
		t.Fatal(err)
	}
	mkfifo(filepath.Join(refs, "ca.crt"))
	symlink("/dev/zero", filepath.Join(refs, "token"))
	pipeCA := memberConfig(t, "east", "pipe-ca")
	pipeCA.Clusters["pipe-ca"].CertificateAuthorityData = nil
	pipeCA.Clusters["pipe-ca"].CertificateAuthority = filepath.Join(refs, "ca.crt")
	zeroToken := serviceAccountConfig(t, "west", "zero-token")
	zeroToken.AuthInfos["zero-token"].Token = ""
	zeroToken.AuthInfos["zero-token"].TokenFile = filepath.Join(refs, "token")
	writeAtomic(t, at("refs.kubeconfig"), merged(t, pipeCA, zeroToken, memberConfig(t, "west", "west")))

	// A configured file that is a pipe.
	explicitPipe := filepath.Join(explicitDir, "config")
	mkfifo(explicitPipe)

	logs := &logBuffer{}
	notRegularBefore := testutil.ToFloat64(file.LoadErrors.WithLabelValues(at("fifo.kubeconfig"), "NotRegularFile"))
	tooLargeBefore := testutil.ToFloat64(file.LoadErrors.WithLabelValues(at("big.kubeconfig"), "FileTooLarge"))
	s := start(t, file.Options{
		Files: []string{explicitPipe},
		Dirs:  []string{fleetDir},
		// File references are refused by the default policy; allow them to read the special
		// files they point to.
		DiscoveredPolicy: file.TrustedPolicy(),
		Options:          kit.Options{Logger: logs.Logger()},
	})
	s.waitEngaged(t, "fleet/east.kubeconfig+east", "fleet/refs.kubeconfig+west")
	s.requireReaches(t, "fleet/east.kubeconfig+east", "east")
	s.requireReaches(t, "fleet/refs.kubeconfig+west", "west")

	for _, want := range [][]string{
		{"Cannot use kubeconfig file", at("fifo.kubeconfig"), "not a regular file: a named pipe"},
		{"Cannot use kubeconfig file", at("big.kubeconfig"), "file too large: more than 1048576 bytes"},
		{"Cannot use kubeconfig file", at("dir.kubeconfig"), "not a regular file: a directory"},
		{"Cannot use kubeconfig file", at("zero.kubeconfig"), "not a regular file: a character device"},
		{"Cannot use kubeconfig file", at("socket.kubeconfig"), "not a regular file: a socket"},
		{"Cannot use kubeconfig file", explicitPipe, "not a regular file: a named pipe"},
		{"Cannot use kubeconfig context", `"cluster"="fleet/refs.kubeconfig+pipe-ca"`, "reading certificate-authority", "named pipe"},
		{"Cannot use kubeconfig context", `"cluster"="fleet/refs.kubeconfig+zero-token"`, "reading tokenFile", "character device"},
	} {
		eventually(t, "a log line with "+want[1], func() error {
			_, err := logs.Find(want...)
			return err
		})
	}
	if got := testutil.ToFloat64(file.LoadErrors.WithLabelValues(at("fifo.kubeconfig"), "NotRegularFile")); got <= notRegularBefore {
		t.Errorf("mcr_file_provider_load_errors_total{reason=NotRegularFile} for the pipe did not grow (%v)", got)
	}
	if got := testutil.ToFloat64(file.LoadErrors.WithLabelValues(at("big.kubeconfig"), "FileTooLarge")); got <= tooLargeBefore {
		t.Errorf("mcr_file_provider_load_errors_total{reason=FileTooLarge} for the big file did not grow (%v)", got)
	}

	// The scans go on: a new file is engaged, and the big file, cut to size, too.
	before := s.snapshot(t, "fleet/east.kubeconfig+east", "fleet/refs.kubeconfig+west")
	writeAtomic(t, at("new.kubeconfig"), merged(t, memberConfig(t, "west", "new")))
	writeAtomic(t, at("big.kubeconfig"), merged(t, memberConfig(t, "west", "big")))
	s.waitEngaged(t, "fleet/east.kubeconfig+east", "fleet/refs.kubeconfig+west", "fleet/new.kubeconfig+new", "fleet/big.kubeconfig+big")
	s.requireUntouched(t, before)

	// Nothing holds the provider up when it stops: no read waits on a pipe or a device.
	began := time.Now()
	s.stop()
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("the provider took %s to stop", took)
	}
	if got := s.rec.Engaged(); len(got) != 0 {
		t.Errorf("still engaged after Start returned: %v", got)
	}
}
