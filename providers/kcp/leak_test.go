// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcp_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
	"mcr.dev/core/providers/providertest"
	"mcr.dev/providers/kcp"
)

// TestNeverReportsCredentials plants markers in every credential the provider reads: the user
// info and query of its own config's Host, its bearer token (which the host and the shards see),
// and the user info and query of the endpoint URLs of the APIExportEndpointSlice. It drives a
// logical cluster through engage, an endpoint that refuses the token, a rotation to another
// endpoint and removal, and a host that refuses the token, and then scans every log line (the
// provider's and the process-wide ones), every Event on the host, every error the provider
// returned and its metrics for the markers.
func TestNeverReportsCredentials(t *testing.T) {
	tok := providertest.Marker("token")
	hostUser, hostPass, hostQuery := providertest.Marker("hostuser"), providertest.Marker("hostpassword"), providertest.Marker("hostquery")
	epUser, epPass, epQuery := providertest.Marker("endpointuser"), providertest.Marker("endpointpassword"), providertest.Marker("endpointquery")
	leaks := providertest.NewLeakCheck(tok, hostUser, hostPass, hostQuery, epUser, epPass, epQuery)

	// A config whose Host carries credentials is refused by New, without quoting them.
	for _, h := range []string{
		strings.Replace(fleet.Member("host").Host(), "://", "://"+hostUser+":"+hostPass+"@", 1),
		fleet.Member("host").Host() + "/clusters/root?access_token=" + hostQuery,
	} {
		cfg := providerConfig()
		cfg.Host = h
		_, err := kcp.New(cfg, "any", kcp.Options{})
		if err == nil || !strings.Contains(err.Error(), "Host is refused") {
			t.Errorf("kcp.New with credentials in the Host: %v, want the Host refused", err)
		}
		leaks.ScanError("kcp.New", err)
	}

	// good and rotated accept the marked token, wrong wants another one.
	good, err := startShard(tok, "east")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(good.Close)
	rotated, err := startShard(tok, "east")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rotated.Close)
	wrong, err := startShard("a-token-the-provider-does-not-have", "west")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wrong.Close)
	cfg := providerConfig()
	cfg.BearerToken = tok
	for _, s := range []interface{ CAData() []byte }{good, rotated, wrong} {
		cfg.CAData = append(cfg.CAData, s.CAData()...)
	}

	lc := logicalcluster.Name(uniqueName(t, "lc"))
	for _, s := range []interface {
		AddCluster(name, home logicalcluster.Name) error
		RemoveCluster(name logicalcluster.Name)
	}{good, rotated} {
		if err := s.AddCluster(lc, "east"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.RemoveCluster(lc) })
	}
	b := newBinding(t, "east", lc, lc.String()+"-binding", "", true)

	const unreachable = "https://127.0.0.1:1/services/apiexport/root/" + exportName
	withUserInfo := strings.Replace(unreachable, "://", "://"+epUser+":"+epPass+"@", 1)
	withQuery := unreachable + "?access_token=" + epQuery
	slice := newSlice(t, good.URL(), withUserInfo, withQuery, wrong.URL())
	invalidBefore := testutil.ToFloat64(kcp.Errors.WithLabelValues("InvalidEndpointURL"))
	s := startWithConfig(t, cfg, slice, kcp.Options{Options: kit.Options{CacheSyncTimeout: 10 * time.Second}}, providertest.NewRecorder())

	// Engage through the good endpoint; the others are reported. The URLs with credentials
	// point where nothing answers, so that a client that used them would quote them in its
	// errors.
	e1 := s.waitEngaged(t, lc)
	s.waitLog(t, "Endpoint cannot be engaged", "user info", "refused")
	s.waitLog(t, "Endpoint cannot be engaged", "a query", "refused")
	s.waitLog(t, "Endpoint cannot be engaged", `"endpoint"="`+wrong.URL()+`"`)
	if got := testutil.ToFloat64(kcp.Errors.WithLabelValues("InvalidEndpointURL")); got < invalidBefore+2 {
		t.Errorf("InvalidEndpointURL errors = %v, want at least %v", got, invalidBefore+2)
	}
	waitSliceEvent(t, slice, kcp.ReasonEndpointUnavailable)

	// Rotation: the slice moves the logical cluster to another endpoint, and the refused URLs
	// change.
	setEndpoints(t, slice, rotated.URL(), withUserInfo+"/other", withQuery+"&other=1", wrong.URL())
	e2 := s.rec.WaitReengaged(t, s.provider, multicluster.ClusterName(lc), e1, waitTimeout)
	if got, want := e2.Cluster.GetConfig().Host, rotated.URL()+"/clusters/"+lc.String(); got != want {
		t.Errorf("the logical cluster talks to %s after the rotation, want %s", got, want)
	}

	// Errors of the provider's API.
	_, err = s.provider.Get(t.Context(), "not-a-member")
	leaks.ScanError("Get", err)
	_, err = s.provider.GetByPath(t.Context(), logicalcluster.NewPath("root:not-a-workspace"))
	leaks.ScanError("GetByPath", err)

	// Removal: the binding goes, then every endpoint.
	if err := b.delete(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.waitDisengaged(t, lc, e2)
	setEndpoints(t, slice)
	s.waitLog(t, "Stopped watching endpoint", `"endpoint"="`+rotated.URL()+`"`)

	// A host that refuses the token: Start fails.
	hostOnlyToken := providerConfig()
	hostOnlyToken.CertData, hostOnlyToken.KeyData, hostOnlyToken.BearerToken = nil, nil, tok
	failedLogs := &providertest.LogBuffer{}
	p, err := kcp.New(hostOnlyToken, slice, kcp.Options{Options: kit.Options{CacheSyncTimeout: 5 * time.Second, Logger: failedLogs.Logger()}})
	if err != nil {
		t.Fatal(err)
	}
	leaks.ScanError("Start", providertest.StartFails(t, p, waitTimeout))

	leaks.Report(t, providertest.LeakReport{
		Logs:   []*providertest.LogBuffer{s.logs, failedLogs},
		Events: []*rest.Config{fleet.Member("host").Config()},
	})
}

// waitSliceEvent waits for an Event of reason on the slice.
func waitSliceEvent(t *testing.T, slice, reason string) eventsv1.Event {
	t.Helper()
	var found eventsv1.Event
	eventually(t, "a "+reason+" Event on slice "+slice, func() error {
		var list eventsv1.EventList
		if err := host.List(t.Context(), &list, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return err
		}
		for _, ev := range list.Items {
			if ev.Regarding.Name == slice && ev.Reason == reason {
				found = ev
				return nil
			}
		}
		return errors.New("none yet")
	})
	return found
}
