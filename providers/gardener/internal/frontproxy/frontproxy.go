// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

// Package frontproxy is a small HTTPS front-proxy that makes a plain kube-apiserver look like a
// Gardener garden cluster to the Gardener provider's tests: it serves the adminkubeconfig
// subresource of Shoots, which only gardener-apiserver implements, by minting short-lived
// kubeconfigs for the clusters that back the Shoots, and reverse-proxies everything else to the
// real apiserver, where Shoots are a CRD.
//
// # What it serves faithfully
//
//   - POST /apis/core.gardener.cloud/v1beta1/namespaces/<ns>/shoots/<name>/adminkubeconfig with
//     a JSON AdminKubeconfigRequest (authentication.gardener.cloud/v1alpha1), answered 201 with
//     the request's spec (spec.expirationSeconds defaulted to 3600 and capped to
//     Options.MaxExpiration, as gardener-apiserver's --shoot-admin-kubeconfig-max-expiration
//     does) and status.kubeconfig plus status.expirationTimestamp.
//   - Gardener's validation: expirationSeconds below 600 or above 2^32-1 is 422 Invalid; a Shoot
//     that does not exist is 404 NotFound; a Shoot without an advertised kube-apiserver address
//     (status.advertisedAddresses named external, internal, wildcard-tls-seed-bound or
//     unmanaged) is 422 Invalid; other methods are 405.
//   - Authentication and authorization the way an aggregated API server delegates them: the
//     caller's bearer token is reviewed with a TokenReview and the user must be allowed to
//     "create" "shoots/adminkubeconfig" in the namespace (SubjectAccessReview), else 401 or
//     403 — so RBAC manifests are tested for real.
//   - Errors as metav1.Status objects, so clients see ordinary API errors.
//   - Every other request (discovery, Shoots list/watch/get, status updates, Events, ...) is
//     proxied unchanged, streaming included, with the caller's own Authorization header.
//
// # What it does not serve
//
//   - The kubeconfig is whatever the Minter returns. Gardener issues a client certificate signed
//     by the shoot's client CA, with one context per advertised address; ServiceAccountMinter
//     issues a ServiceAccount token with one context. Expiry is enforced by revoking the token
//     (deleting the Secret it is bound to) at status.expirationTimestamp, not by the
//     credential's own lifetime.
//   - viewerkubeconfig, protobuf request bodies, dry-run, and the other Gardener subresources
//     and resources (Projects, Seeds, ...) except as CRDs the test installs.
//   - Callers that authenticate with client certificates: the proxy terminates TLS, so only
//     bearer tokens reach the garden apiserver.
package frontproxy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"mcr.dev/core/envtest"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"mcr.dev/core/providers/providertest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
)

// Minter issues a kubeconfig with admin rights for the cluster behind shoot, valid for validity
// (already defaulted, validated and capped), and says when it expires.
type Minter func(ctx context.Context, shoot *gardencorev1beta1.Shoot, validity time.Duration) (kubeconfig []byte, expires time.Time, err error)

// Options configure a Server.
type Options struct {
	// Garden is an admin config of the real garden apiserver: its Host and CA are where
	// requests are proxied to, and its credentials read Shoots and review tokens and access.
	// Required.
	Garden *rest.Config

	// Mint issues the kubeconfigs. Required.
	Mint Minter

	// MaxExpiration caps the validity of issued kubeconfigs, as gardener-apiserver's
	// --shoot-admin-kubeconfig-max-expiration does; requests for more get this much. Tests set
	// it low to observe renewals.
	//
	// Default: no cap.
	MaxExpiration time.Duration
}

// Issuance is one kubeconfig the Server issued.
type Issuance struct {
	Namespace, Name string
	// User is the authenticated user who asked.
	User string
	// Issued is when the Server answered; Expires is status.expirationTimestamp.
	Issued, Expires time.Time
}

// Server is a running front-proxy.
type Server struct {
	// TLSServer serves the proxy and supplies URL and CAData.
	*envtest.TLSServer
	opts      Options
	admin     kubernetes.Interface
	shoots    client.Client
	transport *http.Transport

	mu     sync.Mutex
	issued []Issuance
}

// defaultExpirationSeconds and minExpirationSeconds are Gardener's default and minimum.
const (
	defaultExpirationSeconds = 3600
	minExpirationSeconds     = 600
)

var (
	adminKubeconfigPath = regexp.MustCompile(`^/apis/core\.gardener\.cloud/v1beta1/namespaces/([^/]+)/shoots/([^/]+)/adminkubeconfig/?$`)
	shootsResource      = schema.GroupResource{Group: gardencorev1beta1.GroupName, Resource: "shoots"}
	requestKind         = schema.GroupKind{Group: authenticationv1alpha1.GroupName, Kind: "AdminKubeconfigRequest"}
)

// Start starts a front-proxy for the garden apiserver of opts.Garden on a local HTTPS port.
func Start(opts Options) (*Server, error) {
	if opts.Garden == nil || opts.Mint == nil {
		return nil, errors.New("frontproxy: Options.Garden and Options.Mint are required")
	}
	target, err := url.Parse(opts.Garden.Host)
	if err != nil {
		return nil, fmt.Errorf("frontproxy: garden host: %w", err)
	}
	// Only the garden's CA: the caller's own credentials travel in the Authorization header.
	tlsConfig, err := rest.TLSConfigFor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{
		CAData: opts.Garden.CAData, CAFile: opts.Garden.CAFile, ServerName: opts.Garden.ServerName,
	}})
	if err != nil {
		return nil, fmt.Errorf("frontproxy: garden TLS: %w", err)
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	admin, err := kubernetes.NewForConfig(opts.Garden)
	if err != nil {
		return nil, fmt.Errorf("frontproxy: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := gardencorev1beta1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("frontproxy: %w", err)
	}
	shoots, err := client.New(opts.Garden, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("frontproxy: %w", err)
	}
	s := &Server{
		opts:      opts,
		admin:     admin,
		shoots:    shoots,
		transport: &http.Transport{TLSClientConfig: tlsConfig, ForceAttemptHTTP2: true, Proxy: nil},
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
		},
		Transport:     s.transport,
		FlushInterval: -1, // watches stream
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	s.TLSServer = envtest.StartTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := adminKubeconfigPath.FindStringSubmatch(r.URL.Path); m != nil {
			s.serveAdminKubeconfig(w, r, m[1], m[2])
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	return s, nil
}

// ConfigFor returns a rest.Config that reaches the garden through the proxy with the bearer
// token of cfg (client certificates cannot pass a TLS-terminating proxy).
func (s *Server) ConfigFor(cfg *rest.Config) *rest.Config {
	return &rest.Config{
		Host:            s.URL(),
		BearerToken:     cfg.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.CAData()},
		QPS:             cfg.QPS,
		Burst:           cfg.Burst,
	}
}

// Issued returns the kubeconfigs issued so far, oldest first.
func (s *Server) Issued() []Issuance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Issuance(nil), s.issued...)
}

// Close stops the proxy, cutting open watches.
func (s *Server) Close() {
	s.TLSServer.Close()
	s.transport.CloseIdleConnections()
}

func (s *Server) serveAdminKubeconfig(w http.ResponseWriter, r *http.Request, namespace, name string) {
	ctx := r.Context()
	if r.Method != http.MethodPost {
		writeStatus(w, apierrors.NewMethodNotSupported(schema.GroupResource{Group: shootsResource.Group, Resource: "shoots/adminkubeconfig"}, r.Method))
		return
	}
	user, err := s.authenticate(ctx, r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	if err := s.authorize(ctx, user, namespace, name); err != nil {
		writeStatus(w, err)
		return
	}
	req, err := decodeRequest(r)
	if err != nil {
		writeStatus(w, err)
		return
	}

	seconds := int64(defaultExpirationSeconds)
	if req.Spec.ExpirationSeconds != nil {
		seconds = *req.Spec.ExpirationSeconds
	}
	path := field.NewPath("spec", "expirationSeconds")
	switch {
	case seconds < minExpirationSeconds:
		writeStatus(w, apierrors.NewInvalid(requestKind, "", field.ErrorList{field.Invalid(path, seconds, "may not specify a duration less than 10 minutes")}))
		return
	case seconds > math.MaxUint32:
		writeStatus(w, apierrors.NewInvalid(requestKind, "", field.ErrorList{field.TooLong(path, seconds, math.MaxUint32)}))
		return
	}
	validity := time.Duration(seconds) * time.Second
	if limit := s.opts.MaxExpiration; limit > 0 && validity > limit {
		validity = limit
		// Gardener reports the capped value (whole seconds) back in the spec.
		seconds = int64(limit / time.Second)
	}

	shoot := &gardencorev1beta1.Shoot{}
	if err := s.shoots.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, shoot); err != nil {
		if apierrors.IsNotFound(err) {
			writeStatus(w, apierrors.NewNotFound(shootsResource, name))
			return
		}
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("reading the shoot: %w", err)))
		return
	}
	if len(APIServerAddresses(shoot)) == 0 {
		writeStatus(w, apierrors.NewInvalid(requestKind, name, field.ErrorList{field.Invalid(field.NewPath("status", "status"),
			shoot.Status.AdvertisedAddresses, "no suitable advertised address for kube-apiserver found in .status.advertisedAddresses")}))
		return
	}
	kubeconfig, expires, err := s.opts.Mint(ctx, shoot, validity)
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("issuing the kubeconfig: %w", err)))
		return
	}
	s.mu.Lock()
	s.issued = append(s.issued, Issuance{Namespace: namespace, Name: name, User: user.Username, Issued: time.Now(), Expires: expires})
	s.mu.Unlock()

	req.APIVersion, req.Kind = authenticationv1alpha1.SchemeGroupVersion.String(), requestKind.Kind
	req.Spec.ExpirationSeconds = &seconds
	req.Status = authenticationv1alpha1.AdminKubeconfigRequestStatus{
		Kubeconfig:          kubeconfig,
		ExpirationTimestamp: metav1.NewTime(expires),
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(req)
}

// APIServerAddresses returns the advertised addresses of a Shoot that Gardener builds admin
// kubeconfigs for, in order.
func APIServerAddresses(shoot *gardencorev1beta1.Shoot) []gardencorev1beta1.ShootAdvertisedAddress {
	var out []gardencorev1beta1.ShootAdvertisedAddress
	for _, a := range shoot.Status.AdvertisedAddresses {
		switch a.Name {
		case v1beta1constants.AdvertisedAddressExternal, v1beta1constants.AdvertisedAddressInternal,
			v1beta1constants.AdvertisedAddressWildcardTLSSeedBound, v1beta1constants.AdvertisedAddressUnmanaged:
			out = append(out, a)
		}
	}
	return out
}

// authenticate reviews the caller's bearer token with the garden apiserver.
func (s *Server) authenticate(ctx context.Context, r *http.Request) (authenticationv1.UserInfo, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return authenticationv1.UserInfo{}, apierrors.NewUnauthorized("Unauthorized")
	}
	user, authenticated, err := providertest.ReviewToken(ctx, s.admin, token)
	if err != nil {
		return authenticationv1.UserInfo{}, apierrors.NewInternalError(fmt.Errorf("reviewing the token: %w", err))
	}
	if !authenticated {
		return authenticationv1.UserInfo{}, apierrors.NewUnauthorized("Unauthorized")
	}
	return user, nil
}

// authorize asks the garden apiserver whether user may create shoots/adminkubeconfig of the
// Shoot.
func (s *Server) authorize(ctx context.Context, user authenticationv1.UserInfo, namespace, name string) error {
	allowed, err := providertest.ReviewAccess(ctx, s.admin, user, authorizationv1.ResourceAttributes{
		Namespace: namespace, Verb: "create", Group: shootsResource.Group, Version: gardencorev1beta1.SchemeGroupVersion.Version,
		Resource: shootsResource.Resource, Subresource: "adminkubeconfig", Name: name,
	})
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("reviewing access: %w", err))
	}
	if !allowed {
		return apierrors.NewForbidden(schema.GroupResource{Group: shootsResource.Group, Resource: "shoots/adminkubeconfig"}, name,
			errors.New(forbiddenReason(user.Username, namespace)))
	}
	return nil
}

// forbiddenReason is kube-apiserver's wording of an RBAC denial.
func forbiddenReason(user, namespace string) string {
	return fmt.Sprintf("User %q cannot create resource \"shoots/adminkubeconfig\" in API group %q in the namespace %q", user, shootsResource.Group, namespace)
}

// decodeRequest reads the JSON AdminKubeconfigRequest of a POST.
func decodeRequest(r *http.Request) (*authenticationv1alpha1.AdminKubeconfigRequest, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType, Reason: metav1.StatusReasonUnsupportedMediaType,
				Message: fmt.Sprintf("the front-proxy serves adminkubeconfig in application/json only, not %q", ct),
			}}
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	req := &authenticationv1alpha1.AdminKubeconfigRequest{}
	if err := json.Unmarshal(body, req); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding the AdminKubeconfigRequest: %v", err))
	}
	if (req.Kind != "" && req.Kind != requestKind.Kind) || (req.APIVersion != "" && req.APIVersion != authenticationv1alpha1.SchemeGroupVersion.String()) {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is a %s %s, not an %s", req.APIVersion, req.Kind, requestKind))
	}
	return req, nil
}

// writeStatus writes err as a metav1.Status, the way the apiserver reports errors.
func writeStatus(w http.ResponseWriter, err error) {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	st := se.Status()
	st.APIVersion, st.Kind = "v1", "Status"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}
