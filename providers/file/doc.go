// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package file is a cluster provider that engages one cluster per context of kubeconfig files
// on the local file system, and keeps the fleet in step with the files while they change.
//
// It reads Options.Files, Options.Dirs (the entries matching Options.DirPatterns) and
// Options.Globs, or else $KUBECONFIG or $HOME/.kube/config, watches their directories with
// fsnotify and reads every file again each Options.ResyncPeriod. Each member's credentials are
// those of its context, loaded under Options.Policy for the files named in Files and under
// Options.DiscoveredPolicy for those found through Dirs and Globs (both by default inline
// credentials only; TrustedPolicy for files only the operator writes). Every file read, the
// files a kubeconfig references included, must be a regular file of at most Options.MaxFileSize
// bytes: anything else is an error on that file, never a blocked scan. A context is engaged once
// it answers with those credentials, engaged again when they change, and disengaged when it or
// its file is gone; a broken file keeps its clusters as they were until it is fixed or deleted.
//
// A cluster is named "<file>+<context>", the file relative to Options.NameBase with "%", "+" and
// bytes that are not valid UTF-8 percent-encoded (Provider.ClusterName); names are collision free
// and stable across restarts.
//
// Create the provider with New and hand it to the manager, which starts it; no SetupWithManager
// is needed. Options embeds kit.Options (mcr.dev/core/providers/kit), the fields every provider
// shares; the provider runs on that kit's engine and engage step.
//
// docs/providers/file.md in the mcr repository is the full reference: file watching, naming,
// credentials and rotation, file permissions, broken files, metrics and troubleshooting, options.
package file
