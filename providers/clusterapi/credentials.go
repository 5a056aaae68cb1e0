package clusterapi

import (
	"context"
	"errors"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/cluster"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/reconcileloop"
)

// The kubeconfig Secret of a Cluster, as the Cluster API control plane contract defines it
// (and sigs.k8s.io/cluster-api/util/secret names it): in the Cluster's namespace, named
// "<cluster>-kubeconfig", labeled cluster.x-k8s.io/cluster-name=<cluster>, with the kubeconfig
// under the data key "value".
const (
	// KubeconfigSecretSuffix is appended to a Cluster's name to name its kubeconfig Secret.
	KubeconfigSecretSuffix = "-kubeconfig"

	// KubeconfigDataKey is the key of the kubeconfig in the Secret's data.
	KubeconfigDataKey = "value"

	// ClusterNameLabel is the label Cluster API puts on every Secret of a Cluster. The provider
	// watches only Secrets that carry it, as Cluster API's own controllers do.
	ClusterNameLabel = clusterv1.ClusterNameLabel
)

// KubeconfigSecretName returns the name of the kubeconfig Secret of the Cluster named cluster.
func KubeconfigSecretName(cluster string) string {
	return cluster + KubeconfigSecretSuffix
}

// ClusterName returns the name under which the provider engages the Cluster namespace/name:
// "<namespace>/<name>". Cluster objects are namespaced and names are unique only within a
// namespace, so the namespace is always part of the name.
func ClusterName(namespace, name string) multicluster.ClusterName {
	return multicluster.ClusterName(namespace + "/" + name)
}

// ClusterKey returns the namespace and name of the Cluster object behind a cluster name that
// ClusterName made.
func ClusterKey(name multicluster.ClusterName) (types.NamespacedName, error) {
	ns, n, ok := strings.Cut(string(name), "/")
	if !ok || ns == "" || n == "" || strings.Contains(n, "/") {
		return types.NamespacedName{}, fmt.Errorf("cluster name %q is not of the form <namespace>/<name>", name)
	}
	return types.NamespacedName{Namespace: ns, Name: n}, nil
}

// clusterOfSecret returns the Cluster whose kubeconfig Secret is namespace/name, or false when
// name is not a kubeconfig Secret name.
func clusterOfSecret(namespace, name string) (types.NamespacedName, bool) {
	cluster, ok := strings.CutSuffix(name, KubeconfigSecretSuffix)
	if !ok || cluster == "" {
		return types.NamespacedName{}, false
	}
	return types.NamespacedName{Namespace: namespace, Name: cluster}, true
}

// restConfig turns kubeconfig bytes into the member's rest.Config under the provider's Policy
// and RESTOptions. Errors name fields, never values.
func (p *Provider) restConfig(data []byte) (*rest.Config, error) {
	cfg, err := kubeconfig.Load(data, p.opts.Policy)
	if err != nil {
		return nil, err
	}
	return reconcileloop.ApplyRESTOptions(cfg, p.opts.RESTOptions)
}

// errUnauthorized marks credentials the member refused.
var errUnauthorized = errors.New("the cluster refused the kubeconfig's credentials (Unauthorized)")

// checkAccess asks the member who the credentials are (a SelfSubjectReview, which every
// authenticated user may create), so that refused credentials and unreachable endpoints are
// reported at once and by name instead of as a cache that never syncs. Forbidden still proves
// that the credentials were accepted.
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
	return fmt.Errorf("reaching the cluster at %s: %w", cl.GetConfig().Host, err)
}
