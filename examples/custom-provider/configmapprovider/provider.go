// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package configmapprovider

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/kit"
)

// Defaults of Options.
const (
	DefaultNamespace = "mcr-system"
	DefaultName      = "clusters"
)

// providerName names the provider's logger, queue and Event reporting controller.
const providerName = "configmap-provider"

// snippet:begin provider-options

// Options configures a Provider. The zero value of every field selects its default.
type Options struct {
	// Namespace is the host namespace of the ConfigMap. Defaults to DefaultNamespace
	// ("mcr-system").
	Namespace string

	// Name is the name of the ConfigMap. Defaults to DefaultName ("clusters").
	Name string

	// Options are the fields every provider shares (Policy, RESTOptions, ClusterOptions,
	// CacheSyncTimeout, retry delays, ResyncPeriod, EventRecorder, Logger), with the defaults
	// documented there. Events are recorded on the ConfigMap.
	kit.Options
}

// withDefaults is the only place defaults are applied.
func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	o.SetDefaults(providerName)
	return o
}

// snippet:end provider-options

// snippet:begin provider-type

// Provider engages one cluster per key of a ConfigMap in the host cluster. Create it with New
// and hand it to a manager, which calls Start. The embedded kit.Members supplies the provider
// contract; everything else but discovery comes from the kit's Engine.
type Provider struct {
	// Members supplies Get, IndexField, ClusterNames, ListClusters and Start, which runs the
	// engine.
	kit.Members[multicluster.ClusterName]

	opts   Options
	host   cluster.Cluster // its cache holds the one ConfigMap
	engine *kit.Engine[multicluster.ClusterName]
}

// snippet:end provider-type

// New returns a provider for the ConfigMap that opts names, in the host cluster of hostConfig.
func New(hostConfig *rest.Config, opts Options) (*Provider, error) {
	o := opts.withDefaults()
	host, err := kit.NewHost(providerName, hostConfig, o.Logger, nil, func(co *cluster.Options) {
		// Cache the one ConfigMap and nothing else: the provider needs RBAC for nothing else.
		co.Cache.ByObject = map[client.Object]cache.ByObject{&corev1.ConfigMap{}: {
			Namespaces: map[string]cache.Config{o.Namespace: {}},
			Field:      fields.OneTermEqualSelector("metadata.name", o.Name),
		}}
	})
	if err != nil {
		return nil, err
	}
	p := &Provider{opts: o, host: host}
	p.engine, err = p.Init(kit.EngineOptions[multicluster.ClusterName]{
		Name:    providerName,
		Options: o.Options,
		Sync:    p.sync,
		Sources: []kit.Source[multicluster.ClusterName]{p.source()},
		Host:    host,
		RunHost: true, // the provider built the host, so it runs it
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// snippet:begin provider-source

// source queues every key of the ConfigMap, also the keys an update removed.
func (p *Provider) source() kit.Source[multicluster.ClusterName] {
	return kit.HostObjects[multicluster.ClusterName]{
		Informers: p.host.GetCache(),
		Watches: []kit.Watch[multicluster.ClusterName]{{
			Object: &corev1.ConfigMap{},
			Keys: func(obj client.Object) []multicluster.ClusterName {
				var names []multicluster.ClusterName
				for key := range obj.(*corev1.ConfigMap).Data {
					names = append(names, multicluster.ClusterName(key))
				}
				return names
			},
			KeysOfOld: true,
		}},
	}
}

// snippet:end provider-source

// snippet:begin provider-sync

// sync brings one member in line with the ConfigMap: the Engine engages, re-engages (only when
// the credentials changed) or keeps it; a key that is gone is disengaged.
func (p *Provider) sync(ctx context.Context, name multicluster.ClusterName) kit.Result {
	cm := &corev1.ConfigMap{}
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), client.ObjectKey{Namespace: p.opts.Namespace, Name: p.opts.Name}, cm, name, func() kit.Result {
		p.engine.Disengage(name, nil, "the ConfigMap is gone")
		return kit.Result{}
	}); !ok {
		return res
	}
	raw, listed := cm.Data[string(name)]
	if !listed {
		p.engine.Disengage(name, nil, "removed from the ConfigMap")
		return kit.Result{}
	}
	member := kit.Member{Name: name, Regarding: cm, From: "key " + string(name) + " of the ConfigMap"}
	// ConfigMap keys allow "." and "_", which make poor cluster names: keep DNS labels.
	if errs := validation.IsDNS1123Label(string(name)); len(errs) > 0 {
		return p.engine.Fail(name, member, kit.Permanent("InvalidName", fmt.Errorf("key %q is not a DNS label", name)))
	}
	// Whoever can edit the ConfigMap controls the kubeconfigs: load them under Options.Policy,
	// by default the hardened one (inline credentials only).
	cfg, err := kubeconfig.Load([]byte(raw), p.opts.Policy)
	if err != nil {
		return p.engine.Fail(name, member, kit.Permanent(kit.ReasonInvalidKubeconfig, err))
	}
	member.Config = cfg
	return p.engine.Engage(ctx, name, member)
}

// snippet:end provider-sync
