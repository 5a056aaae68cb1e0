package milo

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/reconcileloop"
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
	u.Path, u.RawPath, u.RawQuery, u.Fragment = ControlPlanePath(project), "", "", ""
	return u.String()
}

// ServiceHost returns the in-cluster address of a project's control plane on Milo's
// infrastructure cluster: https://milo-apiserver.project-<project>.svc.cluster.local:6443. It
// is the default of Options.ControlPlaneHost in ModeProjectControlPlane.
func ServiceHost(project string) string {
	return "https://milo-apiserver.project-" + project + ".svc.cluster.local:6443"
}

// restConfig returns the rest.Config of a project's control plane: a copy of BaseConfig, with
// its credentials, whose Host is Options.ControlPlaneHost(project), changed by RESTOptions.
// Errors name options, never credentials.
func (p *Provider) restConfig(project string) (*rest.Config, error) {
	cfg := rest.CopyConfig(p.opts.BaseConfig)
	cfg.Host = p.opts.ControlPlaneHost(project)
	cfg.APIPath = ""
	return reconcileloop.ApplyRESTOptions(cfg, p.opts.RESTOptions)
}

// errUnauthorized marks credentials the control plane refused.
var errUnauthorized = errors.New("the project's control plane refused the provider's credentials (Unauthorized)")

// checkAccess asks the control plane who the provider is (a SelfSubjectReview, which every
// authenticated user may create), so that refused credentials and unreachable control planes
// are reported at once and by name instead of as a cache that never syncs. Forbidden still
// proves that the credentials were accepted.
func checkAccess(ctx context.Context, cl cluster.Cluster) error {
	cs, err := kubernetes.NewForConfigAndClient(cl.GetConfig(), cl.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	_, err = cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case err == nil, apierrors.IsForbidden(err):
		return nil
	case apierrors.IsUnauthorized(err):
		return errUnauthorized
	}
	return fmt.Errorf("reaching the project's control plane at %s: %w", cl.GetConfig().Host, err)
}
