// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	mcr "mcr.dev/core"
	"mcr.dev/core/fleet"
)

// watch prints a line for each Deployment that runs o.image, then one for each change of those
// Deployments across the fleet, until ctx ends.
func watch(ctx context.Context, reader *fleet.Reader, o options, out *printer) error {
	runs := func(cluster mcr.ClusterName, obj client.Object) bool {
		return slices.Contains(images(obj.(*appsv1.Deployment)), o.image) &&
			o.selector.Matches(labels.Set(obj.GetLabels())) &&
			(o.clusters == nil || slices.Contains(o.clusters, cluster))
	}
	line := func(what string, cluster mcr.ClusterName, obj client.Object) {
		d := obj.(*appsv1.Deployment)
		out.printf("%s  %-8s  %s  %s/%s  %s\n", time.Now().Format(time.TimeOnly), what, cluster,
			d.Namespace, d.Name, strings.Join(images(d), ","))
	}
	// snippet:begin fleet-query-watch
	// One handler hears the Deployments of every engaged cluster, each call with its cluster.
	reg, err := reader.AddEventHandler(ctx, &appsv1.Deployment{}, fleet.HandlerFuncs{
		AddFunc: func(cluster mcr.ClusterName, obj client.Object, existed bool) {
			if !runs(cluster, obj) {
				return
			}
			what := "created"
			if existed { // in the cluster before the handler heard of it
				what = "running"
			}
			line(what, cluster, obj)
		},
		UpdateFunc: func(cluster mcr.ClusterName, oldObj, newObj client.Object) {
			switch before, after := runs(cluster, oldObj), runs(cluster, newObj); {
			case !before && after:
				line("switched", cluster, newObj) // to the image
			case before && !after:
				line("moved", cluster, newObj) // away from it
			case before && oldObj.GetGeneration() != newObj.GetGeneration():
				line("updated", cluster, newObj) // its spec, not only its status
			}
		},
		DeleteFunc: func(cluster mcr.ClusterName, obj client.Object) {
			if runs(cluster, obj) {
				line("deleted", cluster, obj)
			}
		},
	})
	if partial, ok := errors.AsType[*fleet.PartialError](err); ok {
		// The reader tries those clusters again; their lines follow once it can.
		out.printf("Not watching yet: %v\n", partial)
	} else if err != nil {
		return err
	}
	defer reg.Remove()
	// snippet:end fleet-query-watch
	<-ctx.Done()
	return nil
}

// membership prints a line when a cluster joins the fleet or leaves it: the handler hears
// nothing more of a cluster that left, not even deletes.
type membership struct {
	out *printer
	// quiet ends when the command stops, which disengages every cluster: that is not news.
	quiet <-chan struct{}
}

func (m membership) Engage(ctx context.Context, name mcr.ClusterName, _ cluster.Cluster) error {
	m.out.printf("%s  %-8s  %s\n", time.Now().Format(time.TimeOnly), "joined", name)
	context.AfterFunc(ctx, func() {
		select {
		case <-m.quiet:
		default:
			m.out.printf("%s  %-8s  %s (its Deployments are no longer shown)\n", time.Now().Format(time.TimeOnly), "left", name)
		}
	})
	return nil
}

func (membership) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// printer serializes the writes of the watch's handler and of the rest of the command.
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *printer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.w.Write(b)
}

func (p *printer) printf(format string, args ...any) { fmt.Fprintf(p, format, args...) }
