// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package redact keeps credentials out of what a provider reports: Text removes URLs' user info
// and queries, Authorization headers, bearer tokens, JWTs and private keys from a text (and the
// credential values of a member, see Secrets); Error does the same to an error's message and
// Logger to every line of a logr.Logger.
//
// The provider kit (mcr.dev/core/providers/kit) passes every log line, Event note, problem and
// error it reports through it; a provider that reports something of its own outside the kit
// uses it too.
package redact
