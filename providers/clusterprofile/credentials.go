package clusterprofile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"

	"sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"

	"mcr.dev/core/kubeconfig"
	"mcr.dev/core/multicluster"
	"mcr.dev/core/providers/reconcileloop"
)

// The deprecated Secret strategy of the Cluster Inventory API: a consumer finds the kubeconfig of
// a ClusterProfile in a Secret of the profile's namespace that carries both labels below, under
// the data key "Config". The values are those of multicluster-runtime's cluster-inventory-api
// provider.
const (
	// SecretLabelConsumer labels a kubeconfig Secret with the consumer it is meant for
	// (SecretStrategy.ConsumerName).
	SecretLabelConsumer = "x-k8s.io/cluster-inventory-consumer"

	// SecretLabelProfile labels a kubeconfig Secret with the name of its ClusterProfile.
	SecretLabelProfile = "x-k8s.io/cluster-profile"

	// SecretDataKey is the key of the kubeconfig in the Secret's data.
	SecretDataKey = "Config"
)

// ClusterName returns the name under which the provider engages the ClusterProfile
// namespace/name: "<namespace>/<name>". ClusterProfiles are namespaced (a ClusterSet's profiles
// share a namespace, and several cluster managers may register the same cluster in different
// namespaces), so the namespace is always part of the name. It is the name
// multicluster-runtime's cluster-inventory-api provider uses.
func ClusterName(namespace, name string) multicluster.ClusterName {
	return multicluster.ClusterName(namespace + "/" + name)
}

// ClusterKey returns the namespace and name of the ClusterProfile behind a cluster name that
// ClusterName made.
func ClusterKey(name multicluster.ClusterName) (types.NamespacedName, error) {
	ns, n, ok := strings.Cut(string(name), "/")
	if !ok || ns == "" || n == "" || strings.Contains(n, "/") {
		return types.NamespacedName{}, fmt.Errorf("cluster name %q is not of the form <namespace>/<name>", name)
	}
	return types.NamespacedName{Namespace: ns, Name: n}, nil
}

// credentials is what the provider engages a cluster with.
type credentials struct {
	cfg *rest.Config
	// hash is the content hash of everything that decides where and as whom the cluster is
	// reached; equal hashes never re-engage.
	hash string
	// source says where the credentials come from, for logs and Events: `access provider
	// "token"` or `Secret ns/name`. Never a credential.
	source string
	// secret is the kubeconfig Secret of the Secret strategy, nil for access providers.
	secret *corev1.Secret
	// deprecated is true when the access provider came from status.credentialProviders.
	deprecated bool
}

// credentialError is a failure to obtain credentials, with the Event and metric reasons.
type credentialError struct {
	reason       string // Event reason
	metricReason string
	secret       *corev1.Secret // related object, may be nil
	err          error
}

func (e *credentialError) Error() string { return e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }

// credentialsOf returns the credentials of a ClusterProfile: through the first of the
// operator's access providers the profile lists, or else, when the Secret strategy is on, from
// the profile's kubeconfig Secret.
func (p *Provider) credentialsOf(ctx context.Context, cp *v1alpha1.ClusterProfile) (*credentials, error) {
	var accessErr error
	if p.opts.AccessProviders != nil {
		res, err := buildAccessConfig(p.opts.AccessProviders, cp, p.opts.Policy)
		if err == nil {
			cfg, err := reconcileloop.ApplyRESTOptions(res.cfg, p.opts.RESTOptions)
			if err != nil {
				return nil, &credentialError{reason: ReasonInvalidAccessProvider, metricReason: ReasonInvalidAccessProvider, err: err}
			}
			return &credentials{
				cfg:        cfg,
				hash:       accessHash(res),
				source:     fmt.Sprintf("access provider %q", res.provider),
				deprecated: res.deprecated,
			}, nil
		}
		if !errors.Is(err, errNoAccessProvider) {
			reason := kubeconfig.Reason(err)
			if reason == "" {
				reason = ReasonInvalidAccessProvider
			}
			return nil, &credentialError{reason: ReasonInvalidAccessProvider, metricReason: reason, err: err}
		}
		accessErr = err
	}
	if p.opts.Secret == nil {
		return nil, &credentialError{reason: ReasonNoAccessProvider, metricReason: ReasonNoAccessProvider, err: accessErr}
	}
	creds, err := p.secretCredentials(ctx, cp)
	if err != nil && accessErr != nil {
		var ce *credentialError
		if errors.As(err, &ce) {
			ce.err = fmt.Errorf("%w; and %w", accessErr, ce.err)
		}
	}
	return creds, err
}

// secretCredentials reads the kubeconfig of cp from its Secret (the deprecated Secret strategy)
// under the hardened kubeconfig policy.
func (p *Provider) secretCredentials(ctx context.Context, cp *v1alpha1.ClusterProfile) (*credentials, error) {
	var list corev1.SecretList
	if err := p.host.GetCache().List(ctx, &list, client.InNamespace(cp.Namespace), client.MatchingLabels{
		SecretLabelConsumer: p.opts.Secret.ConsumerName,
		SecretLabelProfile:  cp.Name,
	}); err != nil {
		return nil, fmt.Errorf("listing kubeconfig Secrets: %w", err)
	}
	labels := fmt.Sprintf("%s=%s,%s=%s", SecretLabelConsumer, p.opts.Secret.ConsumerName, SecretLabelProfile, cp.Name)
	switch len(list.Items) {
	case 0:
		return nil, &credentialError{reason: ReasonKubeconfigSecretMissing, metricReason: ReasonKubeconfigSecretMissing,
			err: fmt.Errorf("no kubeconfig Secret in namespace %s labeled %s", cp.Namespace, labels)}
	case 1:
	default:
		names := make([]string, 0, len(list.Items))
		for _, s := range list.Items {
			names = append(names, s.Name)
		}
		return nil, &credentialError{reason: ReasonInvalidKubeconfig, metricReason: reasonAmbiguousSecrets,
			err: fmt.Errorf("%d kubeconfig Secrets in namespace %s labeled %s (%s), want exactly one", len(names), cp.Namespace, labels, strings.Join(names, ", "))}
	}
	secret := &list.Items[0]
	where := fmt.Sprintf("Secret %s/%s", secret.Namespace, secret.Name)
	data := secret.Data[SecretDataKey]
	if len(data) == 0 {
		return nil, &credentialError{reason: ReasonInvalidKubeconfig, metricReason: reasonMissingData, secret: secret,
			err: fmt.Errorf("kubeconfig %s has no data under key %q", where, SecretDataKey)}
	}
	cfg, err := kubeconfig.Load(data, p.opts.Policy)
	if err == nil {
		cfg, err = reconcileloop.ApplyRESTOptions(cfg, p.opts.RESTOptions)
	}
	if err != nil {
		reason := kubeconfig.Reason(err)
		if reason == "" {
			reason = ReasonInvalidKubeconfig
		}
		return nil, &credentialError{reason: ReasonInvalidKubeconfig, metricReason: reason, secret: secret,
			err: fmt.Errorf("kubeconfig %s: %w", where, err)}
	}
	return &credentials{cfg: cfg, hash: "secret:" + kubeconfig.Hash(data), source: where, secret: secret}, nil
}

// accessHash is the content hash of a config built through an access provider: the endpoint
// (server, CA, TLS server name, insecure, proxy, compression) and the exec plugin exactly as
// client-go runs it (command, args, env, apiVersion, cluster info, and the cluster config
// handed to the plugin). Profile fields that do not change any of these (conditions,
// properties, version, labels, other access providers) leave it alone. It is computed before
// Options.RESTOptions, which are the same for every build.
func accessHash(res *accessResult) string {
	cfg := res.cfg
	type execContent struct {
		Command            string                    `json:"command"`
		Args               []string                  `json:"args"`
		Env                []clientcmdapi.ExecEnvVar `json:"env"`
		APIVersion         string                    `json:"apiVersion"`
		ProvideClusterInfo bool                      `json:"provideClusterInfo"`
		InteractiveMode    string                    `json:"interactiveMode"`
		Config             json.RawMessage           `json:"config,omitempty"`
	}
	content := struct {
		Host               string       `json:"host"`
		CAData             []byte       `json:"caData"`
		CAFile             string       `json:"caFile"`
		ServerName         string       `json:"serverName"`
		Insecure           bool         `json:"insecure"`
		ProxyURL           string       `json:"proxyURL"`
		DisableCompression bool         `json:"disableCompression"`
		Exec               *execContent `json:"exec"`
	}{
		Host: cfg.Host, CAData: cfg.CAData, CAFile: cfg.CAFile, ServerName: cfg.ServerName,
		Insecure: cfg.Insecure, ProxyURL: res.proxyURL, DisableCompression: cfg.DisableCompression,
	}
	if e := cfg.ExecProvider; e != nil {
		content.Exec = &execContent{
			Command: e.Command, Args: e.Args, Env: e.Env, APIVersion: e.APIVersion,
			ProvideClusterInfo: e.ProvideClusterInfo, InteractiveMode: string(e.InteractiveMode),
		}
		if e.Config != nil {
			raw, err := json.Marshal(e.Config)
			if err != nil {
				// Not expected (the config came from JSON); never equal to anything, so the
				// cluster is engaged again rather than kept with stale plugin data.
				raw, _ = json.Marshal(fmt.Sprintf("unencodable %T: %v", e.Config, err))
			}
			content.Exec.Config = raw
		}
	}
	data, err := json.Marshal(content)
	if err != nil {
		panic(fmt.Sprintf("clusterprofile: encoding plain values: %v", err)) // cannot happen
	}
	sum := sha256.Sum256(data)
	return "access:" + hex.EncodeToString(sum[:])
}

// errUnauthorized marks credentials the member refused.
var errUnauthorized = errors.New("the cluster refused the credentials (Unauthorized)")

// errPluginFailed marks an exec credential plugin that did not produce credentials.
var errPluginFailed = errors.New("the exec credential plugin failed")

// checkAccess asks the member who the credentials are (a SelfSubjectReview, which every
// authenticated user may create), so that a failing plugin, refused credentials and unreachable
// endpoints are reported at once and by name instead of as a cache that never syncs. Forbidden
// still proves that the credentials were accepted.
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
	case cl.GetConfig().ExecProvider != nil && strings.Contains(err.Error(), "getting credentials"):
		// client-go's exec round tripper reports plugin failures with this text and without a
		// wrapped error; the plugin's own stderr goes to the controller's stderr.
		return fmt.Errorf("%w: %v", errPluginFailed, err)
	}
	return fmt.Errorf("reaching the cluster at %s: %w", cl.GetConfig().Host, err)
}
