// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Command fleet-query answers a question across the fleet: which clusters still run image X?
// It lists the Deployments of every member whose containers run the image (-image), through
// one fleet-wide read (mcr.dev/core/fleet) on a field index of container images, and prints
// them with their cluster, then the clusters that could not be asked, with the reason. With
// -watch it prints a line per change instead, across the fleet, until interrupted.
//
// The members are the contexts of kubeconfig files (-fleet, the file provider
// mcr.dev/providers/file). Without -fleet the command is a demo: it starts an embedded fleet of
// three clusters (real kube-apiservers, mcr.dev/core/envtest), seeds Deployments of different
// images, stops one member's API server once it is engaged, and asks.
//
// Exit status: 0 when every cluster answered, 3 when some could not be asked (the answer
// printed is partial), 1 on other errors.
//
//	go run ./fleet-query
//	go run ./fleet-query -fleet ~/.kube/fleet/ -image registry.example/web:v1.2 -l app=web
//	go run ./fleet-query -fleet ~/.kube/fleet/ -image registry.example/web:v1.2 -watch
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcr "mcr.dev/core"
	"mcr.dev/core/fleet"
	mcmanager "mcr.dev/core/manager"
	"mcr.dev/providers/file"
)

// imagesField is the field index of Deployments by the images of their containers.
const imagesField = "spec.images"

// partialExitCode is the exit status of a partial answer.
const partialExitCode = 3

// errPartial marks an answer that lacks some clusters.
var errPartial = errors.New("partial answer")

// listTimeout bounds the wait for the provider to try every member of its first list.
const listTimeout = 2 * time.Minute

func main() {
	err := run(mcr.SetupSignalHandler(), os.Args[1:], os.Stdout)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errPartial):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(partialExitCode)
	default:
		fmt.Fprintln(os.Stderr, "fleet-query:", err)
		os.Exit(1)
	}
}

// options are the command line's.
type options struct {
	fleet    string // kubeconfig files, directories and globs; empty for the demo
	image    string
	selector labels.Selector
	clusters []mcr.ClusterName // only these, when set
	watch    bool
	timeout  time.Duration // each cluster's part of the read

	// beforeQuery runs once the provider has tried every member, before the question is asked:
	// the demo stops a member there.
	beforeQuery func(context.Context) error
}

// parse parses the command line and sets up logging.
func parse(args []string) (options, error) {
	fs := flag.NewFlagSet("fleet-query", flag.ContinueOnError)
	var o options
	fs.StringVar(&o.fleet, "fleet", "", "kubeconfig files, directories and globs of the members, separated by '"+
		string(os.PathListSeparator)+"'; every context is a member (default: an embedded fleet of three clusters, a demo)")
	fs.StringVar(&o.image, "image", "", "the container image to look for (default with the embedded fleet: "+demoImage+")")
	selector := fs.String("l", "", "label selector of the Deployments, as kubectl's -l")
	only := fs.String("clusters", "", "comma-separated names of the clusters to ask (default: every member)")
	fs.BoolVar(&o.watch, "watch", false, "print a line per change across the fleet, until interrupted")
	fs.DurationVar(&o.timeout, "cluster-timeout", fleet.DefaultClusterTimeout, "how long each cluster has to answer")
	verbose := fs.Bool("v", false, "log to stderr")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.selector, err = labels.Parse(*selector); err != nil {
		return o, fmt.Errorf("-l: %w", err)
	}
	for name := range strings.SplitSeq(*only, ",") {
		if name = strings.TrimSpace(name); name != "" {
			o.clusters = append(o.clusters, mcr.ClusterName(name))
		}
	}
	if o.image == "" && o.fleet != "" {
		return o, errors.New("-image is required with -fleet")
	}
	log := logr.Discard()
	if *verbose {
		log = zap.New(zap.WriteTo(os.Stderr), zap.UseDevMode(true))
	}
	mcr.SetLogger(log)
	return o, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	if o.fleet == "" {
		return runDemo(ctx, o, out)
	}
	return query(ctx, o, out)
}

// query asks the members of o.fleet which Deployments run o.image, or, with o.watch, follows
// them until ctx ends.
func query(ctx context.Context, o options, w io.Writer) error {
	out := &printer{w: w}
	var opts file.Options
	opts.Files, opts.Dirs, opts.Globs = file.ParsePaths(o.fleet)
	// The user's own kubeconfigs: accept exec plugins and certificate files, as kubectl does.
	opts.Policy, opts.DiscoveredPolicy = file.TrustedPolicy(), file.TrustedPolicy()
	provider, err := file.New(opts)
	if err != nil {
		return fmt.Errorf("creating the file provider: %w", err)
	}
	configs, err := provider.ReadConfigs()
	if err != nil {
		fmt.Fprintln(os.Stderr, "warning: some kubeconfigs are unusable and are left out:", err)
	}
	if len(configs) == 0 {
		return fmt.Errorf("no cluster in %s", o.fleet)
	}
	// The manager needs a cluster of its own; nothing is read from it.
	host := configs[slices.Sorted(maps.Keys(configs))[0]]
	mgr, err := mcr.NewManager(host, provider, mcr.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	// snippet:begin fleet-query-setup
	// Every member's cache indexes its Deployments by the images of their containers.
	err = mgr.GetFieldIndexer().IndexField(ctx, &appsv1.Deployment{}, imagesField, func(obj client.Object) []string {
		return images(obj.(*appsv1.Deployment))
	})
	if err != nil {
		return fmt.Errorf("indexing Deployments by image: %w", err)
	}
	// CheckReachable: a member whose API server went down after its cache synced is reported,
	// not answered from a cache that no longer changes.
	reader, err := fleet.New(mgr, fleet.Options{CheckReachable: true, ClusterTimeout: o.timeout})
	if err != nil {
		return err
	}
	// snippet:end fleet-query-setup
	if o.watch {
		out.printf("Watching the Deployments that run %s across the fleet; interrupt to stop.\n", o.image)
		if err := mgr.Add(membership{out: out, quiet: ctx.Done()}); err != nil {
			return err
		}
	}

	mgrCtx, stop := context.WithCancel(ctx)
	defer stop()
	var mgrErr error
	stopped := make(chan struct{})
	go func() { mgrErr = mgr.Start(mgrCtx); close(stopped) }()
	err = waitListed(ctx, mgr, stopped)
	if err == nil && o.beforeQuery != nil {
		err = o.beforeQuery(ctx)
	}
	if err == nil && o.watch {
		err = watch(ctx, reader, o, out)
	} else if err == nil {
		err = ask(ctx, reader, notEngaged(provider, mgr.EngagedClusters(), o.clusters), o, out)
	}
	stop()
	<-stopped
	if mgrErr != nil && !errors.Is(mgrErr, context.Canceled) {
		err = errors.Join(err, fmt.Errorf("running the manager: %w", mgrErr))
	}
	return err
}

// ask lists the Deployments that run o.image and prints them, then the clusters that could not
// be asked: those the read failed in, and those in failed already.
func ask(ctx context.Context, reader *fleet.Reader, failed map[mcr.ClusterName]string, o options, out io.Writer) error {
	// snippet:begin fleet-query-list
	opts := []client.ListOption{
		client.MatchingFields{imagesField: o.image},
		client.MatchingLabelsSelector{Selector: o.selector},
	}
	if o.clusters != nil {
		opts = append(opts, fleet.InClusters(o.clusters))
	}
	items, err := fleet.ListItems[*appsv1.Deployment](ctx, reader, &appsv1.DeploymentList{}, opts...)
	if partial, ok := errors.AsType[*fleet.PartialError](err); ok {
		// items holds the Deployments of the clusters that answered.
		for name, why := range partial.Errors {
			failed[name] = why.Error()
		}
	} else if err != nil {
		return err
	}
	// snippet:end fleet-query-list

	// One writer: a line without tabs ends a table, so each table is aligned on its own.
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLUSTER\tNAMESPACE\tNAME\tIMAGE")
	for _, item := range items {
		d := item.Object
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", item.Cluster, d.Namespace, d.Name, strings.Join(images(d), ","))
	}
	var names []string
	if len(failed) > 0 {
		fmt.Fprintf(tw, "\nNot asked (they may run %s too):\nCLUSTER\tREASON\n", o.image)
		for _, name := range slices.Sorted(maps.Keys(failed)) {
			fmt.Fprintf(tw, "%s\t%s\n", name, failed[name])
			names = append(names, string(name))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if names != nil {
		return fmt.Errorf("%w: could not ask %s", errPartial, strings.Join(names, ", "))
	}
	return nil
}

// notEngaged returns the members the provider found but cannot engage, with the reason, and
// the clusters of only that are not members at all; only, when set, limits them.
func notEngaged(provider *file.Provider, engaged, only []mcr.ClusterName) map[mcr.ClusterName]string {
	failed := map[mcr.ClusterName]string{}
	for name, why := range provider.FleetStatus().Failing {
		if !slices.Contains(engaged, name) && (only == nil || slices.Contains(only, name)) {
			failed[name] = "not engaged: " + why
		}
	}
	for _, name := range only {
		if _, found := failed[name]; !found && !slices.Contains(engaged, name) {
			failed[name] = "not a member of the fleet"
		}
	}
	return failed
}

// images returns the images of the Deployment's containers.
func images(d *appsv1.Deployment) []string {
	var images []string
	for _, c := range slices.Concat(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers) {
		images = append(images, c.Image)
	}
	return images
}

// waitListed returns once the provider has tried every member it found, so that the question
// goes to the whole fleet rather than to the members engaged so far.
func waitListed(ctx context.Context, mgr mcr.Manager, stopped <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	for {
		// Nothing reports sync here, so this says whether the provider has listed.
		err := mcmanager.FleetReadiness(mgr, mcmanager.ReadyCheckOptions{})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the fleet: %w (%w)", err, ctx.Err())
		case <-stopped:
			return errors.New("the manager stopped before the provider listed the fleet")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
