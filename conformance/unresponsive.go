// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package conformance

import (
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// UnresponsiveMemberCreator is implemented by harnesses of providers that claim
// UnresponsiveMembers.
type UnresponsiveMemberCreator interface {
	// CreateUnresponsiveMember adds a member to the source of truth whose API server is the
	// one kubeconfig points at: an HTTPS endpoint of the suite that accepts connections and
	// TLS handshakes but never answers a request, like a member whose apiserver hangs.
	// Harness.DeleteMember removes it. The returned Member needs no Client. Called again with
	// the same name, it replaces the member's kubeconfig (new credentials).
	CreateUnresponsiveMember(ctx context.Context, name string, kubeconfig []byte) (Member, error)
}

// unresponsiveServer is the endpoint of an unresponsive member: every request it receives
// stays open, unanswered, until the client gives up or the server closes. It records when
// each request was open, so that a test can tell whether the provider was still waiting for
// the member at a given moment.
type unresponsiveServer struct {
	srv  *httptest.Server
	quit chan struct{}
	// rejecting answers every request at once with 401 Unauthorized instead.
	rejecting bool

	mu       sync.Mutex
	requests []openInterval
}

// openInterval is when one request was open; end is zero while it still is.
type openInterval struct{ start, end time.Time }

func newUnresponsiveServer(rejecting bool) *unresponsiveServer {
	u := &unresponsiveServer{quit: make(chan struct{}), rejecting: rejecting}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(u.hang))
	u.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	u.srv.StartTLS()
	return u
}

func (u *unresponsiveServer) hang(w http.ResponseWriter, r *http.Request) {
	if u.rejecting {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
		return
	}
	u.mu.Lock()
	i := len(u.requests)
	u.requests = append(u.requests, openInterval{start: time.Now()})
	u.mu.Unlock()
	select {
	case <-r.Context().Done():
	case <-u.quit:
	}
	u.mu.Lock()
	u.requests[i].end = time.Now()
	u.mu.Unlock()
}

// close ends every open request and stops the server.
func (u *unresponsiveServer) close() {
	close(u.quit)
	u.srv.Close()
}

// requestCount returns how many requests the server has received.
func (u *unresponsiveServer) requestCount() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.requests)
}

// openAt reports whether a request was open at t.
func (u *unresponsiveServer) openAt(t time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, r := range u.requests {
		if !r.start.After(t) && (r.end.IsZero() || r.end.After(t)) {
			return true
		}
	}
	return false
}

// kubeconfig returns a kubeconfig for the server: its CA, and a token it never checks.
func (u *unresponsiveServer) kubeconfig(name string) ([]byte, error) {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: u.srv.Certificate().Raw})
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: u.srv.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "unresponsive-" + randomToken()}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of an unresponsive member: %w", err)
	}
	return data, nil
}

// newUnresponsive starts an unresponsive server, closed when the test ends; one that rejects
// every request at once with 401 Unauthorized instead, if rejecting.
func (s *spec) newUnresponsive(rejecting bool) *unresponsiveServer {
	u := newUnresponsiveServer(rejecting)
	s.deferCleanup(func() error { u.close(); return nil })
	return u
}

// createUnresponsive adds a member whose apiserver never answers; the member and its server
// are removed when the test ends.
func (s *spec) createUnresponsive(hint string) (Member, *unresponsiveServer) {
	u := s.newUnresponsive(false)
	id := newMemberName(hint)
	kubeconfig, err := u.kubeconfig(id)
	if err != nil {
		s.erroredf("%v", err)
	}
	return s.addWithKubeconfig(id, kubeconfig), u
}

// addWithKubeconfig adds member id with the kubeconfig the suite chose, through the harness's
// UnresponsiveMemberCreator, and deletes it when the test ends unless the test did.
func (s *spec) addWithKubeconfig(id string, kubeconfig []byte) Member {
	m := s.writeKubeconfig(id, kubeconfig)
	tm := &trackedMember{m: m}
	s.members = append(s.members, tm)
	s.deferCleanup(func() error {
		if tm.deleted {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), s.opts.Timeouts.Harness)
		defer cancel()
		if err := s.h.DeleteMember(ctx, m); err != nil {
			return fmt.Errorf("harness: deleting member %q: %w", m.ID, err)
		}
		return nil
	})
	return m
}

// writeKubeconfig creates member id with the given kubeconfig, or gives it that kubeconfig.
func (s *spec) writeKubeconfig(id string, kubeconfig []byte) Member {
	creator, ok := s.h.(UnresponsiveMemberCreator)
	if !ok {
		s.erroredf("the test needs a harness that implements UnresponsiveMemberCreator, which %T does not", s.h)
	}
	ctx, cancel := s.harnessCtx()
	defer cancel()
	m, err := creator.CreateUnresponsiveMember(ctx, id, kubeconfig)
	if err != nil {
		s.erroredf("harness: CreateUnresponsiveMember(%q): %v", id, err)
	}
	m = m.withDefaults(id)
	if m.Name == "" {
		s.erroredf("harness: CreateUnresponsiveMember(%q) returned an empty cluster name", id)
	}
	return m
}

// firstRequest returns when the first request arrived; zero if none has.
func (u *unresponsiveServer) firstRequest() time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.requests) == 0 {
		return time.Time{}
	}
	return u.requests[0].start
}

func testNoDelayBehindUnresponsiveMember(s *spec) {
	in := s.start()
	hung, u := s.createUnresponsive("hung")
	// Give the provider the stability window to get to the unresponsive member: a provider that
	// never sends it a request (it engages without checking access or syncing anything) cannot
	// be held up by it.
	s.wait(s.opts.Timeouts.Stable, func() bool { return u.requestCount() > 0 || len(in.probe.of(hung.Name)) > 0 })
	m := s.create("beside")
	e := s.waitEngaged(in, m)
	s.expectReaches(in, e, m)
	if first := u.firstRequest(); !first.IsZero() && first.Before(e.at) && !u.openAt(e.at) {
		s.failf("%q was engaged only after the provider had stopped waiting for the unresponsive member %q "+
			"(its request to that member's apiserver began %s before the engagement and had ended): a member that does not "+
			"answer must not hold up the others; engage members independently, each with its own timeout",
			m.Name, hung.Name, e.at.Sub(first).Round(time.Millisecond))
	}
}
