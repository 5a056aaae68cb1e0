// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"mcr.dev/core/multicluster"
)

// ClusterName returns the name under which the provider engages a project: the project's name
// (the name of its Project and of its ProjectControlPlane). Both objects are cluster-scoped, so
// the name is unique, stable, and what Milo's webhooks and controllers know a project by.
func ClusterName(project string) multicluster.ClusterName {
	return multicluster.ClusterName(project)
}

// ProjectName returns the project behind a cluster name ClusterName made.
func ProjectName(name multicluster.ClusterName) string {
	return string(name)
}

// ControlPlanePath returns the path under which a Milo apiserver serves a project's control
// plane: /apis/resourcemanager.miloapis.com/v1alpha1/projects/<project>/control-plane.
func ControlPlanePath(project string) string {
	return "/apis/resourcemanager.miloapis.com/v1alpha1/projects/" + url.PathEscape(project) + "/control-plane"
}

// ControlPlaneURL returns the URL of a project's control plane behind the Milo apiserver at
// base: base's scheme and host with ControlPlanePath as its path (any path of base is
// replaced). It is the default of Options.ControlPlaneHost in ModeProject.
func ControlPlaneURL(base *url.URL, project string) string {
	u := *base
	// Path is the decoded path, RawPath its escaped form: ControlPlanePath escaped once.
	u.RawPath = ControlPlanePath(project)
	u.Path = "/apis/resourcemanager.miloapis.com/v1alpha1/projects/" + project + "/control-plane"
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// ServiceHost returns the in-cluster address of a project's control plane on Milo's
// infrastructure cluster: https://milo-apiserver.project-<project>.svc.cluster.local:6443. It
// is the default of Options.ControlPlaneHost in ModeProjectControlPlane, which refuses the
// projects CheckServiceProject refuses: for them the host would name something else.
func ServiceHost(project string) string {
	return "https://milo-apiserver.project-" + project + ".svc.cluster.local:6443"
}

// serviceHost is the default ControlPlaneHost of ModeProjectControlPlane, a variable so that tests,
// which cannot resolve in-cluster Services, can point it elsewhere.
var serviceHost = ServiceHost

// CheckServiceProject reports why ServiceHost cannot name the in-cluster Service of a project
// unambiguously: the host is milo-apiserver.project-<project>.svc.cluster.local, so
// project-<project> must be a namespace name, a DNS label (no dots, at most 63 characters). A
// project name with a dot would make a host that means another Service in another namespace,
// or a name outside the cluster (project "x.svc.example.com" makes a host under example.com).
// The default ControlPlaneHost of ModeProjectControlPlane applies it: such a project is reported
// (ClusterSetupFailed) and not engaged, and no other project is affected.
func CheckServiceProject(project string) error {
	if errs := validation.IsDNS1123Label("project-" + project); len(errs) > 0 {
		return fmt.Errorf("project %q has no in-cluster Service host: project-<name> must be a namespace name (%s)", project, strings.Join(errs, "; "))
	}
	return nil
}
