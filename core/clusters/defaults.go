// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package clusters

import (
	"maps"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/restmapper"
)

// Defaults are the cluster options set once for a whole manager (manager.WithClusterDefaults)
// and inherited by every cluster a provider builds for its members, unless the provider's own
// options set them. The zero value of every field inherits nothing for it.
//
// What wins, from strongest to weakest:
//
//  1. the provider's own options: a kit provider's Options.ClusterOptions run after the
//     defaults, so whatever field they set wins; its Options.RESTOptions run after QPS and Burst
//     were defaulted;
//  2. these Defaults;
//  3. the built-in defaults: client-go's scheme and a cache of every namespace
//     (controller-runtime), QPS 20 and Burst 30 (the provider kit).
//
// Precedence is per field of cluster.Options: a provider option that assigns a whole field
// (o.Cache = cache.Options{...}) replaces the default of that field, one that sets a part of
// it (o.Cache.SyncPeriod = &d) keeps the rest of the default.
type Defaults struct {
	// Scheme resolves the members' objects to kinds; register every type the controllers use
	// in any member, CRD types included, in it. It is shared by all members, read-only.
	//
	// Defaults to nil: client-go's scheme, which knows only the built-in kinds.
	Scheme *runtime.Scheme

	// Cache is the cache.Options each member's cache starts from (namespaces, selectors,
	// transforms, sync period, ...). Its Scheme, Mapper and HTTPClient are ignored: each member's
	// cache uses its own cluster's.
	//
	// Defaults to the zero cache.Options: every namespace, no selectors.
	Cache cache.Options

	// QPS and Burst are given to a member's rest.Config that sets neither. Set both.
	//
	// Default to 0: the provider's default (the provider kit's DefaultQPS and DefaultBurst).
	QPS   float32
	Burst int

	// RESTMappers gives the members served by one apiserver endpoint one REST mapper
	// (restmapper.Pool.ClusterOption); read package restmapper for when that is correct.
	//
	// Defaults to nil: restmapper.Default's Pool, unless OwnRESTMappers.
	RESTMappers *restmapper.Pool

	// OwnRESTMappers gives each member a REST mapper of its own, as controller-runtime does,
	// instead of sharing them per endpoint: for members behind a proxy that picks the backend
	// cluster from the client's token at one URL. RESTMappers is then ignored.
	//
	// Defaults to false: members share (RESTMappers).
	OwnRESTMappers bool
}

// ClusterOption returns the cluster.Option that applies Scheme, Cache and the REST mappers. Pass it
// before a provider's own options, so that theirs win. Every cluster gets maps of its own, so
// that an option that changes the cache's namespaces of one member never touches another's.
func (d Defaults) ClusterOption() cluster.Option {
	return func(o *cluster.Options) {
		if d.Scheme != nil {
			o.Scheme = d.Scheme
		}
		c := d.Cache
		// Built from the member's own config by cluster.New when nil; a shared one would send
		// every member's requests to the cluster it was made for.
		c.Scheme, c.Mapper, c.HTTPClient = nil, nil, nil
		c.DefaultNamespaces = maps.Clone(c.DefaultNamespaces)
		c.ByObject = maps.Clone(c.ByObject)
		o.Cache = c
		switch {
		case d.OwnRESTMappers:
			restmapper.Own(o)
		case d.RESTMappers != nil:
			d.RESTMappers.ClusterOption()(o)
		default:
			restmapper.Default().ClusterOption()(o)
		}
	}
}

// DefaultsReceiver is implemented by providers that build their members' clusters with a
// manager's Defaults: every provider built on the provider kit (mcr.dev/core/providers/kit)
// does. The manager calls SetClusterDefaults once, when it is created, before it starts the
// provider; clusters built before the call (by a provider started by hand) keep what they had.
type DefaultsReceiver interface {
	SetClusterDefaults(Defaults)
}
