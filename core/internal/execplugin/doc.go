// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package execplugin runs the exec credential plugins of member clusters (a kubeconfig's
// users[].user.exec, a KEP-5339 access provider) in place of client-go's exec authenticator,
// so that a plugin can neither hold up nor outgrow the process that runs it.
//
// client-go runs a plugin without a time limit or a context, reads its stdout into an unbounded
// buffer, copies its stderr to the controller's stderr and never kills it. A Source runs the
// same plugin with the same contract (ExecCredential client.authentication.k8s.io/v1 or
// v1beta1, exec.env over the process's environment, KUBERNETES_EXEC_INFO with the cluster when
// provideClusterInfo is set, no terminal) under bounds:
//
//   - each call ends after Options.Timeout; the plugin is started in a process group of its own,
//     and the whole group is killed when the call ends (answered, timed out, over its output
//     limit) and when the Source is closed, so that nothing it started outlives it;
//   - stdout is read up to Options.MaxOutput bytes, then the plugin is killed; stderr is not
//     read at all (it goes to /dev/null: it may hold secrets, and nothing may report it);
//   - concurrent requests share one running call, and each waits only as long as its own
//     context allows.
//
// Config turns a member's rest.Config into one without ExecProvider whose Transport gets the
// credentials from the Source: a bearer token as the Authorization header, a client certificate
// through the TLS handshake's GetClientCertificate. Credentials are reused until their
// expirationTimestamp, and dropped once when the member answers 401.
//
// Errors name the member and the plugin's command (its base name) and say what happened ("did
// not answer within 30s", "wrote more than 1 MiB to stdout", "exited with status 3"); they never
// quote what the plugin wrote.
package execplugin
