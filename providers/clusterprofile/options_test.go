// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusterprofile_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/cluster-inventory-api/pkg/access"

	"mcr.dev/core/multicluster"
	"mcr.dev/providers/clusterprofile"
)

func TestNewValidatesOptions(t *testing.T) {
	cfg := fleet.Member("hub").Config()
	for what, tc := range map[string]struct {
		opts clusterprofile.Options
		want string
	}{
		"no strategy":       {clusterprofile.Options{}, "Options.AccessProviders"},
		"empty consumer":    {clusterprofile.Options{Secret: &clusterprofile.SecretStrategy{}}, "ConsumerName"},
		"empty file":        {clusterprofile.Options{AccessProviders: &access.Config{}}, "no providers"},
		"provider w/o exec": {clusterprofile.Options{AccessProviders: &access.Config{Providers: []access.Provider{{Name: "x"}}}}, "execConfig is missing"},
	} {
		if _, err := clusterprofile.New(cfg, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New: %v, want an error mentioning %q", what, err, tc.want)
		}
	}
	if _, err := clusterprofile.New(nil, clusterprofile.Options{Secret: &clusterprofile.SecretStrategy{ConsumerName: "c"}}); err == nil {
		t.Error("New with a nil host config: no error")
	}
}

func TestProviderFile(t *testing.T) {
	good := providerFile(`, "profileSourcedCLIArgsPolicy": "Append", "profileSourcedEnvVarsPolicy": "Replace"`)
	cfg, err := clusterprofile.ParseProviderFile([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Providers[0]; p.Name != accessProviderName || p.ExecConfig.Command != pluginPath || !p.ExecConfig.ProvideClusterInfo ||
		p.ProfileSourcedCLIArgsPolicy != access.ProfileSourcedCLIArgsPolicyAppend || p.ProfileSourcedEnvVarsPolicy != access.ProfileSourcedEnvVarsPolicyReplace {
		t.Errorf("parsed %+v", p)
	}
	for what, tc := range map[string]struct{ data, want string }{
		"YAML":           {"providers:\n- name: x\n", "JSON"},
		"unknown field":  {providerFile(`, "profileSourcedArgsPolicy": "Append"`), "unknown field"},
		"bad policy":     {providerFile(`, "profileSourcedEnvVarsPolicy": "Merge"`), "profileSourcedEnvVarsPolicy"},
		"bad apiVersion": {`{"providers": [{"name": "x", "execConfig": {"command": "x", "apiVersion": "v1"}}]}`, "apiVersion"},
		"no command":     {`{"providers": [{"name": "x", "execConfig": {"apiVersion": "client.authentication.k8s.io/v1"}}]}`, "command is empty"},
		"duplicate":      {`{"providers": [` + strings.Repeat(`{"name": "x", "execConfig": {"command": "x", "apiVersion": "client.authentication.k8s.io/v1"}},`, 2) + `{"name": "y"}]}`, "duplicate"},
	} {
		if _, err := clusterprofile.ParseProviderFile([]byte(tc.data)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", what, err, tc.want)
		}
	}

	// The flag: unset means no access providers; set loads the file.
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	load := clusterprofile.RegisterProviderFileFlag(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if cfg, err := load(); cfg != nil || err != nil {
		t.Errorf("flag not given: %v, %v; want nil, nil", cfg, err)
	}
	file := filepath.Join(t.TempDir(), "providers.json")
	if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	fs = flag.NewFlagSet("test", flag.ContinueOnError)
	load = clusterprofile.RegisterProviderFileFlag(fs)
	if err := fs.Parse([]string{"-" + clusterprofile.ProviderFileFlag + "=" + file}); err != nil {
		t.Fatal(err)
	}
	if cfg, err := load(); err != nil || len(cfg.Providers) != 1 {
		t.Errorf("flag given: %v, %v", cfg, err)
	}
	if _, err := clusterprofile.LoadProviderFile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestClusterKey(t *testing.T) {
	key, err := clusterprofile.ClusterKey(clusterprofile.ClusterName("ns", "p"))
	if err != nil || key.Namespace != "ns" || key.Name != "p" {
		t.Errorf("ClusterKey round trip: %v, %v", key, err)
	}
	for _, bad := range []multicluster.ClusterName{"p", "/p", "ns/", "a/b/c"} {
		if _, err := clusterprofile.ClusterKey(bad); err == nil {
			t.Errorf("ClusterKey(%q): no error", bad)
		}
	}
}

func TestIdentityValidate(t *testing.T) {
	for what, tc := range map[string]struct {
		id   clusterprofile.Identity
		want string
	}{
		"valid":        {clusterprofile.Identity{ClusterID: "a.b-c", ClusterSet: "s"}, ""},
		"no id":        {clusterprofile.Identity{ClusterSet: "s"}, "missing"},
		"not a domain": {clusterprofile.Identity{ClusterID: "Not_A_Domain", ClusterSet: "s"}, "DNS subdomain"},
		"too long":     {clusterprofile.Identity{ClusterID: strings.Repeat("a", 129), ClusterSet: "s"}, "128"},
		"no set":       {clusterprofile.Identity{ClusterID: "a"}, "clusterset.k8s.io is missing"},
	} {
		err := tc.id.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", what, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error mentioning %q", what, err, tc.want)
		}
	}
}
