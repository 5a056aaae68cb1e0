// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"mcr.dev/core/envtest"
)

// A client that trusts CAData reaches the server over HTTP/2, and Close ends a request that is
// still open (a watch) instead of waiting for it.
func TestTLSServer(t *testing.T) {
	opened := make(chan struct{})
	s := envtest.StartTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/watch" {
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(opened)
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, r.Proto)
	}))
	t.Cleanup(s.Close)

	hc, err := rest.HTTPClientFor(&rest.Config{Host: s.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: s.CAData()}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Get(s.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(body) != "HTTP/2.0" {
		t.Errorf("served %q, want HTTP/2.0", body)
	}

	untrusted, err := rest.HTTPClientFor(&rest.Config{Host: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := untrusted.Get(s.URL() + "/"); err == nil {
		_ = resp.Body.Close()
		t.Error("a client that does not trust CAData reached the server")
	}

	watch, err := hc.Get(s.URL() + "/watch")
	if err != nil {
		t.Fatal(err)
	}
	<-opened
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, watch.Body)
		ended <- err
	}()
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case err := <-ended:
		t.Logf("the open request ended with Close: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("an open request outlived Close")
	}
	<-closed
}
