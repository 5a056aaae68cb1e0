// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Defaults of Options.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultNamespace     = "default"
	// DefaultRetryPeriod is the default of Options.RetryPeriod, unless RenewInterval is shorter.
	DefaultRetryPeriod = time.Second
)

// serviceAccountNamespaceFile is where a pod finds its own namespace.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options configure the sharding of a fleet across replicas. The zero value of every field
// selects its default; New applies the defaults (the only place that does). Replicas of one
// group must use the same Group, Namespace, LeaseDuration and Config (pointing at the same
// cluster); Identity and Weight are per replica.
type Options struct {
	// Group names the set of replicas that share a fleet: all Leases of the group carry it. Two
	// deployments with different groups shard independently, even in one namespace.
	//
	// Required. manager.New defaults it to the manager's LeaderElectionID when that is set.
	Group string

	// Namespace is the namespace of the host cluster that holds the group's Leases.
	//
	// Defaults to $POD_NAMESPACE, else the namespace of the pod's service account, else
	// "default".
	Namespace string

	// Identity names this replica. It must be unique among the live replicas of the group: two
	// replicas with one identity would both believe they own the same clusters.
	//
	// Defaults to the hostname (the pod name in Kubernetes) followed by "_" and 8 random hex
	// digits, so a restarted pod is a new replica.
	Identity string

	// Weight is this replica's share of the fleet relative to the other replicas': a replica
	// with weight 2 owns about twice as many clusters as one with weight 1. It must not be
	// negative.
	//
	// Defaults to 1.
	Weight float64

	// LeaseDuration is how long a replica's membership Lease may go unrenewed before the other
	// replicas declare it dead and take over its clusters: the failover time after a crash
	// or a network partition. A graceful stop hands clusters over at once.
	//
	// Defaults to 15s.
	LeaseDuration time.Duration

	// RenewDeadline is how long a replica keeps its clusters engaged without a successful
	// renewal of its membership Lease. It must be shorter than LeaseDuration, so that a replica
	// cut off from the host cluster has disengaged every cluster before anyone else may take
	// them over; LeaseDuration - RenewDeadline is the margin for scheduling delays and clock
	// drift.
	//
	// Defaults to 2/3 of LeaseDuration.
	RenewDeadline time.Duration

	// RenewInterval is how often the membership Lease is renewed and the group's members are
	// listed; it bounds how fast a replica notices a peer joining or leaving. It must be
	// shorter than RenewDeadline.
	//
	// Defaults to 1/3 of LeaseDuration.
	RenewInterval time.Duration

	// RetryPeriod is how often a replica tries again to take a cluster it owns whose previous
	// owner has not released it yet, and to renew a membership Lease after a failed attempt.
	//
	// Defaults to 1s, or RenewInterval if that is shorter.
	RetryPeriod time.Duration

	// Config is the cluster that holds the Leases. Its QPS and Burst limit the Lease calls;
	// they come from a client of their own, so controllers' traffic never delays renewals.
	//
	// Required. manager.WithSharding defaults it to the manager's host config.
	Config *rest.Config

	// Logger receives ownership and membership changes, with the keys "replica" and "cluster".
	//
	// Defaults to Log, else to controller-runtime's logger named "sharding".
	Logger logr.Logger

	// Log is the former name of Logger, used when Logger is unset.
	//
	// Deprecated: use Logger.
	Log logr.Logger
}

// withDefaults returns the options with every default applied, or why they are invalid.
func (o Options) withDefaults() (Options, error) {
	if o.Group == "" {
		return o, errors.New("sharding: Options.Group is required")
	}
	if o.Config == nil {
		return o, errors.New("sharding: Options.Config is required")
	}
	if o.Namespace == "" {
		o.Namespace = podNamespace()
	}
	if o.Identity == "" {
		id, err := defaultIdentity()
		if err != nil {
			return o, fmt.Errorf("sharding: choosing an identity: %w", err)
		}
		o.Identity = id
	}
	if o.Weight < 0 || math.IsNaN(o.Weight) || math.IsInf(o.Weight, 0) {
		return o, fmt.Errorf("sharding: Options.Weight must be a positive number, got %v", o.Weight)
	}
	if o.Weight == 0 {
		o.Weight = 1
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = DefaultLeaseDuration
	}
	if o.RenewDeadline <= 0 {
		o.RenewDeadline = o.LeaseDuration * 2 / 3
	}
	if o.RenewInterval <= 0 {
		o.RenewInterval = o.LeaseDuration / 3
	}
	if o.RetryPeriod <= 0 {
		o.RetryPeriod = min(DefaultRetryPeriod, o.RenewInterval)
	}
	if o.RenewDeadline >= o.LeaseDuration {
		return o, fmt.Errorf("sharding: RenewDeadline (%v) must be shorter than LeaseDuration (%v)", o.RenewDeadline, o.LeaseDuration)
	}
	if o.RenewInterval >= o.RenewDeadline {
		return o, fmt.Errorf("sharding: RenewInterval (%v) must be shorter than RenewDeadline (%v)", o.RenewInterval, o.RenewDeadline)
	}
	if o.Logger.GetSink() == nil {
		o.Logger = o.Log
	}
	if o.Logger.GetSink() == nil {
		o.Logger = ctrllog.Log.WithName("sharding")
	}
	o.Logger = o.Logger.WithValues("replica", o.Identity)
	return o, nil
}

func podNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	if b, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return DefaultNamespace
}

func defaultIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	suffix := make([]byte, 4)
	if _, err := rand.Read(suffix); err != nil {
		return "", err
	}
	return host + "_" + hex.EncodeToString(suffix), nil
}
