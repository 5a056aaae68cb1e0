// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package fleetstatus

import (
	"context"
	"errors"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"mcr.dev/core/multicluster"
)

// Reasons the Aggregator and FromError give.
const (
	// ReasonSucceeded is the reason of a True result that names none.
	ReasonSucceeded = "Succeeded"
	// ReasonFailed is the reason of a False result that names none, and of an error FromError
	// cannot classify.
	ReasonFailed = "Failed"
	// ReasonUnknown is the reason of an Unknown result that names none.
	ReasonUnknown = "Unknown"
	// ReasonTimeout is given to an error that is, or wraps, context.DeadlineExceeded or a network
	// timeout.
	ReasonTimeout = "Timeout"
	// ReasonUnreachable is given to an error of the network (connection refused, DNS, ...).
	ReasonUnreachable = "Unreachable"
	// ReasonNotEngaged is given to multicluster.ErrClusterNotFound: the cluster left the fleet
	// while it was being worked on.
	ReasonNotEngaged = "NotEngaged"

	// ReasonAllReady, ReasonNotReady, ReasonPending and ReasonNoClusters are the reasons of the
	// summary condition: every cluster True; some cluster False; none False but some Unknown;
	// no cluster at all (the summary is then True: nothing is failing).
	ReasonAllReady   = "AllReady"
	ReasonNotReady   = "NotReady"
	ReasonPending    = "Pending"
	ReasonNoClusters = "NoClusters"
)

// Result is what a controller found out about one cluster for one hub object.
type Result struct {
	// Cluster is the cluster's name.
	Cluster multicluster.ClusterName
	// Type is the condition type; empty selects Options.ConditionType.
	Type string
	// Status is True, False or Unknown; empty counts as Unknown.
	Status metav1.ConditionStatus
	// Reason is a CamelCase word for the status; empty selects ReasonSucceeded, ReasonFailed or
	// ReasonUnknown after the status.
	Reason string
	// Message says in words why; the Aggregator redacts credentials from it and truncates it.
	Message string
}

// FromError is the Result of an operation on a cluster that returned err: True when err is
// nil, else False with the reason ReasonForError gives and the error's text as message.
func FromError(cluster multicluster.ClusterName, err error) Result {
	if err == nil {
		return Result{Cluster: cluster, Status: metav1.ConditionTrue, Reason: ReasonSucceeded}
	}
	return Result{Cluster: cluster, Status: metav1.ConditionFalse, Reason: ReasonForError(err), Message: err.Error()}
}

// ReasonForError names the cause of err in one CamelCase word: the reason of a Kubernetes API
// error (Forbidden, NotFound, Conflict, ...), ReasonTimeout, ReasonUnreachable,
// ReasonNotEngaged, or else ReasonFailed.
func ReasonForError(err error) string {
	if reason := apierrors.ReasonForError(err); reason != metav1.StatusReasonUnknown {
		return string(reason)
	}
	var (
		netErr net.Error
		opErr  *net.OpError
		dnsErr *net.DNSError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout
	case errors.Is(err, multicluster.ErrClusterNotFound):
		return ReasonNotEngaged
	case errors.As(err, &opErr), errors.As(err, &dnsErr):
		return ReasonUnreachable
	}
	return ReasonFailed
}
