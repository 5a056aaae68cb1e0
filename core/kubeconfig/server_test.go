// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig_test

import (
	"errors"
	"strings"
	"testing"

	"mcr.dev/core/kubeconfig"
)

func TestCheckServerURL(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want error
	}{
		{"https://127.0.0.1:6443", nil},
		{"127.0.0.1:6443", nil},
		{"http://kcp.example.com/services/apiexport/root/widgets", nil},
		{"https://admin:s3cr3tpw@127.0.0.1:6443", kubeconfig.ErrURLData},
		{"https://127.0.0.1:6443/?access_token=s3cr3tpw", kubeconfig.ErrURLData},
		{"https://127.0.0.1:6443/#s3cr3tpw", kubeconfig.ErrURLData},
		{"ftp://127.0.0.1/s3cr3tpw", kubeconfig.ErrInvalid},
		{"https://[s3cr3tpw", kubeconfig.ErrInvalid},
	} {
		err := kubeconfig.CheckServerURL("endpoint URL", c.raw)
		if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
			t.Errorf("%s: got %v, want %v", c.raw, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cr3tpw") || !strings.Contains(err.Error(), "endpoint URL")) {
			t.Errorf("%s: the error quotes the URL or does not name the field: %v", c.raw, err)
		}
	}
}
