// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/redact"
)

// UnknownClusterPolicy says how a webhook answers a request it cannot route to a cluster it
// serves.
type UnknownClusterPolicy string

const (
	// DenyUnknownCluster denies the request, with a message naming the cluster and why it is not
	// served. Safe for validating webhooks that guard an invariant.
	DenyUnknownCluster UnknownClusterPolicy = "Deny"
	// AllowUnknownCluster allows the request unchanged, with a warning the client sees. For
	// webhooks whose checks are advisory, where a member joining or leaving the fleet must not
	// block writes.
	AllowUnknownCluster UnknownClusterPolicy = "Allow"
)

// Options configure a Webhook. The zero value of every field but Path selects its default.
type Options struct {
	// Path is where the webhook is served. Requests of the local cluster (the manager's host,
	// when it is engaged) are served at Path itself; with per-cluster paths (no
	// ClusterResolver), those of member <name> at ClusterPath(Path, <name>), that is
	// Path + "/" + EscapeClusterName(<name>). It must start with "/", must not end with one,
	// and may hold letters, digits and "-_.~/" only.
	//
	// Required by New. The builder (ManagedBy) defaults it from the object's type:
	// /validate-<group>-<version>-<kind>, /mutate-... or /admit-..., the group's dots as dashes
	// and the kind in lower case, as controller-runtime names its webhook paths.
	Path string

	// ClusterResolver, when set, tells the cluster of each request from the request itself
	// (KCPClusterResolver does so from kcp's kcp.io/cluster annotation); the webhook then serves
	// Path only, for every cluster.
	//
	// Defaults to nil: the cluster is the one the request's path names.
	ClusterResolver ClusterResolver

	// UnknownCluster is the answer to a request for a cluster the webhook does not serve
	// (neither engaged nor found by Lookup), and to one whose cluster the ClusterResolver cannot
	// tell.
	//
	// Defaults to DenyUnknownCluster.
	UnknownCluster UnknownClusterPolicy

	// Lookup finds a cluster the webhook is not engaged with. The builder sets it to the
	// manager's provider (Provider.Get) so that, with manager.WithSharding, every replica serves
	// every member of the fleet and not only the members it owns: admission has no owner, the
	// API servers call whichever replica their Service picks.
	//
	// Defaults to nil with New: only engaged clusters are served.
	Lookup func(ctx context.Context, name multicluster.ClusterName) (cluster.Cluster, error)

	// Logger receives the webhook's lines; those about a request carry the cluster under
	// "cluster", and the logger in a handler's context has it too. Lines are redacted
	// (redact.Logger): handler errors may quote a member's URL.
	//
	// Defaults to controller-runtime's logger named "webhook", with the path under "path".
	Logger logr.Logger

	// RecoverPanic answers a request whose handler panics with an error instead of crashing
	// the process.
	//
	// Defaults to true.
	RecoverPanic *bool
}

// withDefaults returns o with every unset field defaulted, or why o is not valid. It is the
// only place defaults are decided.
func (o Options) withDefaults() (Options, error) {
	if err := validatePath(o.Path); err != nil {
		return o, err
	}
	switch o.UnknownCluster {
	case "":
		o.UnknownCluster = DenyUnknownCluster
	case DenyUnknownCluster, AllowUnknownCluster:
	default:
		return o, fmt.Errorf("webhook %s: unknown UnknownCluster policy %q (want %q or %q)",
			o.Path, o.UnknownCluster, DenyUnknownCluster, AllowUnknownCluster)
	}
	if o.Logger.GetSink() == nil {
		o.Logger = ctrllog.Log.WithName("webhook")
	}
	o.Logger = redact.Logger(o.Logger.WithValues("path", o.Path))
	if o.RecoverPanic == nil {
		recoverPanic := true
		o.RecoverPanic = &recoverPanic
	}
	return o, nil
}

// validatePath accepts the paths Options.Path documents.
func validatePath(p string) error {
	if p == "" {
		return errors.New("webhook: Options.Path is required")
	}
	if !strings.HasPrefix(p, "/") || p == "/" || strings.HasSuffix(p, "/") || path.Clean(p) != p {
		return fmt.Errorf("webhook: path %q must start with \"/\", must not end with one and must be clean", p)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !unreserved(c) && c != '/' {
			return fmt.Errorf("webhook: path %q holds %q: only letters, digits and \"-_.~/\" are allowed", p, c)
		}
	}
	return nil
}
