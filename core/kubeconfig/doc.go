// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package kubeconfig turns kubeconfig bytes that come from somewhere other than the operator's
// own disk (a Secret, a file dropped by another system, a field of an inventory object) into a
// rest.Config, and refuses everything in them that would let the author of those bytes do more
// than point at an API server with inline credentials.
//
// A kubeconfig can run programs (exec credential plugins), load in-process auth-provider plugins,
// read any file the controller can read (certificate-authority, client-certificate, client-key,
// tokenFile) and turn off server certificate checks (insecure-skip-tls-verify). For a kubeconfig
// written by the controller's operator that is all fine; for one stored in a Secret that anybody
// with write access to Secrets in a namespace can change, each is a way to run code in, or read
// files from, the controller's pod. Load therefore enforces a Policy whose zero value rejects all
// four; each kind is allowed by its own field, so operators opt in to exactly what they need.
//
// The server is checked as client-go will dial it: it must be https (plain http needs
// AllowPlainHTTP) and carry no user info, query or fragment, which no Policy allows, as they put
// credentials where every error quotes them. A proxy-url needs AllowProxyURL. An allowed exec
// plugin may set only the environment variables of DefaultExecEnv and Policy.AllowExecEnv, so
// that a kubeconfig cannot set LD_PRELOAD, PATH and their kind. A context named "" is an error,
// never the current context.
//
// Errors never quote kubeconfig values (tokens, keys, paths): they name the kubeconfig entry and
// field that was rejected and the Policy field that would allow it. Reason maps an error to a
// short, stable string suitable for a metric label or a Kubernetes Event reason.
//
// Hash and ContextHash give content hashes for deciding whether a cluster must be re-engaged:
// equal hashes mean equal credentials and endpoint, so metadata-only edits of the object that
// holds the kubeconfig do not restart anything.
//
// Providers of mcr.dev/providers/... (kubeconfig Secrets, files, cluster inventories) all load
// member credentials through this package, so the same kubeconfig is accepted or refused the
// same way whichever provider reads it.
package kubeconfig
