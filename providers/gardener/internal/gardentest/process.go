// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"mcr.dev/core/providers/providertest"
)

// process is one etcd, kube-apiserver or gardener-apiserver of the garden.
type process struct {
	name string
	cmd  *exec.Cmd
	out  *providertest.OutputTail
	done chan struct{} // closed once the process has exited
	err  error         // exit status, once done is closed
}

// start runs path with args; its output goes to out, prefixed with "[name] ", and its last lines
// are kept for errors.
func start(name, path string, args []string, out io.Writer) (*process, error) {
	t := &providertest.OutputTail{Prefix: "[" + name + "] ", Out: out}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = t, t
	// The kernel kills the server when the test binary dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, out: t, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop sends SIGTERM, then SIGKILL after grace, and returns once the process is gone.
func (p *process) stop(grace time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// waitReady polls url with client until it answers 200, the process exits or ctx ends.
func (p *process) waitReady(ctx context.Context, client *http.Client, url string) error {
	for {
		err := getOK(ctx, client, url)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v); last output:\n%s", p.name, p.err, p.out.String())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last probe: %v); last output:\n%s", p.name, ctx.Err(), err, p.out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func getOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s %s", url, resp.Status, bytes.TrimSpace(body))
	}
	return nil
}

// httpClient returns a client for probes with the given TLS configuration (nil: plain HTTP).
func httpClient(tlsConfig *tls.Config) *http.Client {
	return &http.Client{
		Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true},
		Timeout:   5 * time.Second,
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// writeFiles writes name -> content into dir, readable by the owner only.
func writeFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// replaceFile writes data to path through a rename, so that a server watching path never reads
// it half written.
func replaceFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
