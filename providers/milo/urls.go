package milo

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// checkHost refuses a rest.Config Host whose URL has user info, a query or a fragment: they may
// carry credentials, which client-go's errors and klog lines would quote, and the provider
// derives every project's URL from it. The error names what is wrong, never the URL or any
// part of it.
func checkHost(host string) error {
	if !strings.Contains(host, "://") {
		// client-go takes a bare host:port for https.
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		// url.Parse quotes its input; rest.DefaultServerUrlFor reports a malformed URL later,
		// but only once it is known to carry no credentials.
		if strings.Contains(host, "@") || strings.ContainsAny(host, "?#") {
			return errors.New("it is not a valid URL")
		}
		return nil
	}
	var parts []string
	if u.User != nil {
		parts = append(parts, "user info")
	}
	if u.RawQuery != "" || u.ForceQuery {
		parts = append(parts, "a query")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		parts = append(parts, "a fragment")
	}
	if len(parts) > 0 {
		return errors.New("it has " + strings.Join(parts, " and ") + ", which may carry credentials; put credentials in the rest.Config's fields")
	}
	return nil
}

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
