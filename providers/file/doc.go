// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package file is a cluster provider that engages one cluster per context of kubeconfig files on
// the local file system: Options.Files, Options.Dirs and Options.Globs, or else $KUBECONFIG or
// $HOME/.kube/config. Directories are watched and every file is read again each ResyncPeriod; a
// cluster is named "<file>+<context>" (Provider.ClusterName), stable across restarts.
// Kubeconfigs load under a hardened policy by default (TrustedPolicy for files only the operator
// writes), and a broken file keeps its clusters until it is fixed or deleted.
//
// Create it with New and hand it to the manager, which starts it. Options embeds kit.Options,
// the fields every provider shares. ReadConfigs reads the fleet once without engaging anything.
//
// See docs/providers/file.md in the mcr repository: file watching and safe reads, naming,
// credentials, running in Kubernetes, troubleshooting, options and coming from
// multicluster-runtime.
package file
