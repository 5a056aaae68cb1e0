//go:build unix

// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readFile reads regular files up to the limit and refuses everything else at once, on real
// files: a pipe without a writer, devices that never end or are empty, a socket, a directory.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	const limit = 1 << 10
	path := func(name string) string { return filepath.Join(dir, name) }
	write := func(name string, data []byte) {
		if err := os.WriteFile(path(name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("small", []byte("apiVersion: v1"))
	write("at-limit", bytes.Repeat([]byte("a"), limit))
	write("over-limit", bytes.Repeat([]byte("a"), limit+1))
	if err := syscall.Mkfifo(path("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path("dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"zero": "/dev/zero", "null": "/dev/null", "dangling": path("missing"), "link-to-small": "small"} {
		if err := os.Symlink(target, path(name)); err != nil {
			t.Fatal(err)
		}
	}
	// A socket path must be short; the test directory may be long.
	sockDir, err := os.MkdirTemp("", "mcr-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })

	for _, tc := range []struct {
		name    string
		path    string
		wantErr error
		wantIn  string
		wantLen int
	}{
		{name: "regular", path: path("small"), wantLen: len("apiVersion: v1")},
		{name: "symlink to a regular file", path: path("link-to-small"), wantLen: len("apiVersion: v1")},
		{name: "exactly the limit", path: path("at-limit"), wantLen: limit},
		{name: "one byte over the limit", path: path("over-limit"), wantErr: errTooLarge, wantIn: "more than 1024 bytes"},
		{name: "named pipe without a writer", path: path("fifo"), wantErr: errNotRegular, wantIn: "named pipe"},
		{name: "directory", path: path("dir"), wantErr: errNotRegular, wantIn: "directory"},
		{name: "symlink to /dev/zero", path: path("zero"), wantErr: errNotRegular, wantIn: "character device"},
		{name: "symlink to /dev/null", path: path("null"), wantErr: errNotRegular, wantIn: "character device"},
		{name: "socket", path: sock, wantErr: errNotRegular, wantIn: "socket"},
		{name: "dangling symlink", path: path("dangling"), wantErr: fs.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type result struct {
				data []byte
				err  error
			}
			done := make(chan result, 1)
			go func() {
				data, err := readFile(tc.path, limit)
				done <- result{data, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("readFile(%s) blocked", tc.name)
			}
			if tc.wantErr == nil {
				if r.err != nil || len(r.data) != tc.wantLen {
					t.Errorf("readFile = %d bytes, %v; want %d bytes", len(r.data), r.err, tc.wantLen)
				}
				return
			}
			if !errors.Is(r.err, tc.wantErr) || !strings.Contains(r.err.Error(), tc.wantIn) {
				t.Errorf("readFile error = %v; want %v mentioning %q", r.err, tc.wantErr, tc.wantIn)
			}
		})
	}
}
