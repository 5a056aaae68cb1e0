// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package providertest

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func TestMarkerIsUnique(t *testing.T) {
	a, b := Marker("bearer token"), Marker("bearer token")
	if a == b || !strings.Contains(a, "bearertoken") || strings.ContainsAny(a, " :/@?&=") {
		t.Errorf("markers %q, %q", a, b)
	}
}

// fakeT records failures of Check.
type fakeT struct {
	testing.TB
	errs []string
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Error(args ...any)     { f.errs = append(f.errs, args[0].(string)) }
func (f *fakeT) Errorf(string, ...any) { f.errs = append(f.errs, "leak") }

func TestLeakCheckFindsMarkers(t *testing.T) {
	m := Marker("token")
	c := NewLeakCheck(m, "")
	var ft fakeT
	c.Check(&ft)
	if len(ft.errs) != 1 {
		t.Fatalf("an empty check passed: %v", ft.errs)
	}

	var logs LogBuffer
	logs.Logger().Info("engaged", "cluster", "east")
	c.ScanLogs(&logs)
	c.ScanError("error", nil)
	c.ScanError("error", errors.New("refused"))
	ft = fakeT{}
	c.Check(&ft)
	if len(ft.errs) != 0 || c.Scanned() != 2 {
		t.Fatalf("clean texts: %v, %d scanned", ft.errs, c.Scanned())
	}

	logs.Logger().Error(errors.New("token "+m+" refused"), "cannot engage")
	c.ScanLogs(&logs)
	reg := prometheus.NewRegistry()
	counter := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, []string{"reason"})
	reg.MustRegister(counter)
	counter.WithLabelValues(m).Inc()
	if err := c.ScanMetrics(reg); err != nil {
		t.Fatal(err)
	}
	ft = fakeT{}
	c.Check(&ft)
	if len(ft.errs) != 2 {
		t.Errorf("want the log line and the metric, got %d leaks", len(ft.errs))
	}
}

func TestMarkedKubeconfigs(t *testing.T) {
	admin := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca"), CertData: []byte("cert")}}
	m := Marker("kc")
	marked, err := MarkedKubeconfigs(admin, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(marked) < 8 {
		t.Fatalf("%d variants", len(marked))
	}
	for _, v := range marked {
		cfg, err := clientcmd.Load(v.Kubeconfig)
		if err != nil {
			t.Fatalf("%s: %v", v.Field, err)
		}
		// Key data is base64 in the file.
		if !strings.Contains(string(v.Kubeconfig), m) && !strings.Contains(string(cfg.AuthInfos["member"].ClientKeyData), m) {
			t.Errorf("%s: the marker is not in the kubeconfig", v.Field)
		}
		if v.Reason == "" {
			t.Errorf("%s: no reason", v.Field)
		}
	}
}
