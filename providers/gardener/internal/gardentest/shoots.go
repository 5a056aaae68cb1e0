// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardentest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
)

// ShootServer is a kube-apiserver that plays a shoot's control plane. Several Shoots may
// advertise the same server; it trusts the client CA of each.
type ShootServer struct {
	*kubeAPIServer
}

// Name returns the server's name, shoot-<n>.
func (s *ShootServer) Name() string { return s.name }

// Host returns the server's URL, which Shoots advertise.
func (s *ShootServer) Host() string { return s.host() }

// Config returns an admin rest.Config for the server that bypasses Gardener.
func (s *ShootServer) Config() *rest.Config { return s.config() }

// CA returns the PEM certificate of the CA that signed the server's serving certificate: the
// cluster CA of the Shoots it serves.
func (s *ShootServer) CA() []byte { return bytes.Clone(s.ca.certPEM) }

// grantShootAdmins binds the groups of the client certificates the adminkubeconfig subresource
// issues to cluster-admin, as Gardener does in every shoot.
func (s *ShootServer) grantShootAdmins(ctx context.Context) error {
	c, err := client.New(s.config(), client.Options{})
	if err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "gardener.cloud:admins"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: v1beta1constants.ShootSystemAdminsGroupName},
			{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: v1beta1constants.ShootProjectAdminsGroupName},
		},
	}
	if err := c.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding the shoot admin groups on %s: %w", s.name, err)
	}
	return nil
}

// shootTrust is what the garden keeps of one Shoot: the server it advertises and its client
// CAs, the current one last (an older one stays until its rotation completes).
type shootTrust struct {
	server *ShootServer
	cas    []*authority
}

// The suffixes of the project-namespace objects the adminkubeconfig subresource reads:
// InternalSecret "<shoot>.ca-client" and ConfigMap "<shoot>.ca-cluster".
const (
	clientCASuffix  = ".ca-client"
	clusterCASuffix = ".ca-cluster"
)

// ProvideShoot does for the Shoot namespace/shoot what gardenlet does when it creates a shoot's
// control plane on server: it writes the Shoot's client CA (InternalSecret "<shoot>.ca-client")
// and cluster CA (ConfigMap "<shoot>.ca-cluster") into the project namespace through c, a
// client of the garden, and makes server trust the client CA. The Shoot itself, with server
// among its advertised addresses, is the caller's to write. It returns once server accepts
// certificates of the new CA.
func (g *Garden) ProvideShoot(ctx context.Context, c client.Client, namespace, shoot string, server *ShootServer) error {
	ca, err := newAuthority("ca-client-"+namespace+"-"+shoot, true)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: shoot + clusterCASuffix},
		Data:       map[string]string{"ca.crt": string(server.ca.certPEM)},
	}
	if err := createOrUpdate(ctx, c, cm, func() { cm.Data = map[string]string{"ca.crt": string(server.ca.certPEM)} }); err != nil {
		return err
	}
	if err := g.writeClientCA(ctx, c, namespace, shoot, ca); err != nil {
		return err
	}
	g.mu.Lock()
	old := g.trust[namespace+"/"+shoot]
	g.trust[namespace+"/"+shoot] = &shootTrust{server: server, cas: []*authority{ca}}
	g.mu.Unlock()
	if old != nil && old.server != server {
		if err := g.writeTrust(old.server); err != nil {
			return err
		}
	}
	if err := g.writeTrust(server); err != nil {
		return err
	}
	return waitTrusted(ctx, server, ca, true)
}

// RotateClientCA gives the Shoot a new client CA, which its server trusts at once beside the
// old one: what the adminkubeconfig subresource issues from now on works, and what it issued
// before works until revokeOld, which drops the old CA (the end of a certificate-authority
// rotation) and returns once the server refuses it.
func (g *Garden) RotateClientCA(ctx context.Context, c client.Client, namespace, shoot string) (revokeOld func(context.Context) error, err error) {
	key := namespace + "/" + shoot
	g.mu.Lock()
	t := g.trust[key]
	g.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("gardentest: Shoot %s was not provided", key)
	}
	ca, err := newAuthority("ca-client-"+namespace+"-"+shoot, true)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	old := t.cas
	t.cas = append(slices.Clone(old), ca)
	g.mu.Unlock()
	if err := g.writeTrust(t.server); err != nil {
		return nil, err
	}
	if err := waitTrusted(ctx, t.server, ca, true); err != nil {
		return nil, err
	}
	if err := g.writeClientCA(ctx, c, namespace, shoot, ca); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		g.mu.Lock()
		t.cas = slices.DeleteFunc(t.cas, func(a *authority) bool { return slices.Contains(old, a) })
		g.mu.Unlock()
		if err := g.writeTrust(t.server); err != nil {
			return err
		}
		for _, a := range old {
			if err := waitTrusted(ctx, t.server, a, false); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// ForgetShoot makes the Shoot's server stop trusting its client CAs, as when gardenlet deletes
// a shoot's control plane.
func (g *Garden) ForgetShoot(namespace, shoot string) error {
	g.mu.Lock()
	t := g.trust[namespace+"/"+shoot]
	delete(g.trust, namespace+"/"+shoot)
	g.mu.Unlock()
	if t == nil {
		return nil
	}
	return g.writeTrust(t.server)
}

func (g *Garden) writeClientCA(ctx context.Context, c client.Client, namespace, shoot string, ca *authority) error {
	data := map[string][]byte{"ca.crt": ca.certPEM, "ca.key": ca.keyPEM}
	s := &gardencorev1beta1.InternalSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: shoot + clientCASuffix},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
	return createOrUpdate(ctx, c, s, func() { s.Data = data })
}

// writeTrust rewrites server's client CA bundle: its own CA (for the admin) and the client
// CAs of every Shoot it serves. kube-apiserver reloads the file when it changes.
func (g *Garden) writeTrust(server *ShootServer) error {
	// Under the lock: concurrent writers would share the temporary file, and a bundle
	// computed earlier must not overwrite a later one.
	g.mu.Lock()
	defer g.mu.Unlock()
	bundle := slices.Clone(server.ca.certPEM)
	for _, t := range g.trust {
		if t.server == server {
			for _, ca := range t.cas {
				bundle = append(bundle, ca.certPEM...)
			}
		}
	}
	return replaceFile(filepath.Join(server.dir, clientCAFile), bundle)
}

// trustTimeout bounds the wait for kube-apiserver to reload its client CA bundle, which it
// notices through a file watch (or its one-minute resync).
const trustTimeout = 2 * time.Minute

// waitTrusted waits until server accepts (trusted) or refuses (!trusted) client certificates
// of ca, probing with a certificate in the shoot admin group.
func waitTrusted(ctx context.Context, server *ShootServer, ca *authority, trusted bool) error {
	certPEM, keyPEM, err := ca.clientCert("realgarden-probe", v1beta1constants.ShootSystemAdminsGroupName)
	if err != nil {
		return err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(server.ca.certPEM)
	hc := httpClient(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	ctx, cancel := context.WithTimeout(ctx, trustTimeout)
	defer cancel()
	for {
		req, err := newGet(ctx, server.host()+"/api")
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if (resp.StatusCode == http.StatusOK) == trusted && (trusted || resp.StatusCode == http.StatusUnauthorized) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("gardentest: %s did not %s the client CA %s in time: %w", server.name,
				map[bool]string{true: "accept", false: "drop"}[trusted], ca.cert.Subject.CommonName, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// createOrUpdate creates obj, or applies set to the existing object and updates it.
func createOrUpdate(ctx context.Context, c client.Client, obj client.Object, set func()) error {
	err := c.Create(ctx, obj)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	set()
	return c.Update(ctx, obj)
}
