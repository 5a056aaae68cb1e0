// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package redact_test

import (
	"errors"
	"fmt"

	"k8s.io/client-go/rest"

	"mcr.dev/core/redact"
)

func Example() {
	cfg := &rest.Config{Host: "https://east.example.com", BearerToken: "s3cr3t-t0ken-value"}
	err := errors.New(`Get "https://admin:hunter2@east.example.com/api?token=abc": EOF; token s3cr3t-t0ken-value refused`)

	fmt.Println(redact.Error(err, redact.Secrets(cfg)...))
	fmt.Println(redact.Text("Authorization: Bearer abcdefghijklmnopqrstuvwxyz"))
	// Output:
	// Get "https://REDACTED@east.example.com/api?REDACTED": EOF; token REDACTED refused
	// Authorization: Bearer REDACTED
}
