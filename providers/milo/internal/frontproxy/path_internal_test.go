// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import "testing"

func TestSplitControlPlanePath(t *testing.T) {
	for _, tc := range []struct {
		path, project, rest string
		ok                  bool
	}{
		{path: ProjectsPath + "p1/control-plane", project: "p1", rest: "/", ok: true},
		{path: ProjectsPath + "p1/control-plane/", project: "p1", rest: "/", ok: true},
		{path: ProjectsPath + "p1/control-plane/api/v1/namespaces", project: "p1", rest: "/api/v1/namespaces", ok: true},
		{path: ProjectsPath + "p1/control-plane/apis/resourcemanager.miloapis.com/v1alpha1/projects/p2/control-plane/api",
			project: "p1", rest: "/apis/resourcemanager.miloapis.com/v1alpha1/projects/p2/control-plane/api", ok: true},
		{path: ProjectsPath + "p1", ok: false},                     // the Project object itself: the host
		{path: ProjectsPath + "p1/status", ok: false},              // its status: the host
		{path: ProjectsPath + "p1/control-planes", ok: false},      // not the control plane
		{path: ProjectsPath + "/control-plane", ok: false},         // no project
		{path: ProjectsPath, ok: false},                            // the list of Projects
		{path: "/api/v1/namespaces/default/configmaps", ok: false}, // the host
		{path: "/apis/resourcemanager.miloapis.com/v1alpha1/organizations/o/control-plane", ok: false},
	} {
		project, rest, ok := splitControlPlanePath(tc.path)
		if ok != tc.ok || project != tc.project || rest != tc.rest {
			t.Errorf("splitControlPlanePath(%q) = %q, %q, %t; want %q, %q, %t", tc.path, project, rest, ok, tc.project, tc.rest, tc.ok)
		}
	}
}
