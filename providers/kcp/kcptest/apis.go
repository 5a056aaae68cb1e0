// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kcptest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"
	apisv1alpha2 "github.com/kcp-dev/sdk/apis/apis/v1alpha2"
	corev1alpha1 "github.com/kcp-dev/sdk/apis/core/v1alpha1"
	tenancyv1alpha1 "github.com/kcp-dev/sdk/apis/tenancy/v1alpha1"
	conditionsv1alpha1 "github.com/kcp-dev/sdk/apis/third_party/conditions/apis/conditions/v1alpha1"
)

// DefaultWaitTimeout bounds each wait of the helpers below when their context has no earlier
// deadline: a workspace is Ready in about 4 seconds and a binding Bound in about 7 on a small
// machine.
const DefaultWaitTimeout = 2 * time.Minute

var scheme = newScheme()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	sb := runtime.NewSchemeBuilder(
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		apisv1alpha1.AddToScheme,
		apisv1alpha2.AddToScheme,
		corev1alpha1.AddToScheme,
		tenancyv1alpha1.AddToScheme,
	)
	if err := sb.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Scheme returns the scheme of Server.Client: the client-go types, apiextensions.k8s.io/v1,
// and kcp's apis.kcp.io (v1alpha1 and v1alpha2), core.kcp.io and tenancy.kcp.io types. Each
// call returns a new scheme.
func Scheme() *runtime.Scheme { return newScheme() }

func newWorkspaceList() client.ObjectList { return &tenancyv1alpha1.WorkspaceList{} }
func newAPIExportList() client.ObjectList { return &apisv1alpha1.APIExportList{} }

// Workspace is a kcp workspace: its path, by which it is reached through kcp's URL, and its
// logical cluster, the name the kcp provider gives the cluster (annotation kcp.io/cluster).
type Workspace struct {
	Path    logicalcluster.Path
	Cluster logicalcluster.Name
}

// CreateWorkspace creates a workspace of the default type named name in the parent workspace
// (e.g. root) and waits until it is Ready.
func (s *Server) CreateWorkspace(ctx context.Context, parent logicalcluster.Path, name string) (Workspace, error) {
	c, err := s.Client(parent)
	if err != nil {
		return Workspace{}, err
	}
	ws := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	// Right after kcp starts, its workspace admission may not have seen the parent's
	// WorkspaceType yet ("parent type cannot be resolved"): that alone is retried.
	var createErr error
	err = poll(ctx, "workspace "+name+" to be admitted in "+parent.String(), func(ctx context.Context) (string, error) {
		createErr = c.Create(ctx, ws.DeepCopy())
		if apierrors.IsForbidden(createErr) && strings.Contains(createErr.Error(), "cannot be resolved") {
			return createErr.Error(), nil
		}
		return "", nil
	})
	if err == nil {
		err = createErr
	}
	if err != nil {
		return Workspace{}, fmt.Errorf("kcptest: creating workspace %s in %s: %w", name, parent, err)
	}
	path := parent.Join(name)
	err = poll(ctx, "workspace "+path.String()+" to be Ready", func(ctx context.Context) (string, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, ws); err != nil {
			return "", err
		}
		if ws.Status.Phase != corev1alpha1.LogicalClusterPhaseReady || ws.Spec.Cluster == "" {
			return fmt.Sprintf("phase %q, logical cluster %q", ws.Status.Phase, ws.Spec.Cluster), nil
		}
		return "", nil
	})
	if err != nil {
		return Workspace{}, err
	}
	return Workspace{Path: path, Cluster: logicalcluster.Name(ws.Spec.Cluster)}, nil
}

// DeleteWorkspace deletes a workspace and waits until it is gone.
func (s *Server) DeleteWorkspace(ctx context.Context, ws Workspace) error {
	parent, name := ws.Path.Split()
	c, err := s.Client(parent)
	if err != nil {
		return err
	}
	obj := &tenancyv1alpha1.Workspace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := client.IgnoreNotFound(c.Delete(ctx, obj)); err != nil {
		return fmt.Errorf("kcptest: deleting workspace %s: %w", ws.Path, err)
	}
	return poll(ctx, "workspace "+ws.Path.String()+" to be gone", func(ctx context.Context) (string, error) {
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, obj); {
		case apierrors.IsNotFound(err):
			return "", nil
		case err != nil:
			return "", err
		}
		return fmt.Sprintf("phase %q", obj.Status.Phase), nil
	})
}

// CreateSchema creates in workspace ws the APIResourceSchema of a CRD, named
// <prefix>.<plural>.<group> (prefix is usually a version or date, e.g. "v1"), and returns it;
// its name is what an APIExport lists.
func (s *Server) CreateSchema(ctx context.Context, ws logicalcluster.Path, crd *apiextensionsv1.CustomResourceDefinition, prefix string) (*apisv1alpha1.APIResourceSchema, error) {
	schema, err := apisv1alpha1.CRDToAPIResourceSchema(crd, prefix)
	if err != nil {
		return nil, fmt.Errorf("kcptest: converting CRD %s: %w", crd.Name, err)
	}
	c, err := s.Client(ws)
	if err != nil {
		return nil, err
	}
	if err := c.Create(ctx, schema); err != nil {
		return nil, fmt.Errorf("kcptest: creating APIResourceSchema %s in %s: %w", schema.Name, ws, err)
	}
	return schema, nil
}

// CreateExport creates in workspace ws an APIExport (apis.kcp.io/v1alpha1) of the named
// APIResourceSchemas, with the given permission claims, and waits until kcp has given it an
// identity and created its APIExportEndpointSlice (named after the export). The slice lists
// the virtual workspace URL of a shard once a workspace on that shard binds the export.
func (s *Server) CreateExport(ctx context.Context, ws logicalcluster.Path, name string, schemas []string, claims ...apisv1alpha1.PermissionClaim) (*apisv1alpha1.APIExport, error) {
	c, err := s.Client(ws)
	if err != nil {
		return nil, err
	}
	export := &apisv1alpha1.APIExport{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       apisv1alpha1.APIExportSpec{LatestResourceSchemas: schemas, PermissionClaims: claims},
	}
	if err := c.Create(ctx, export); err != nil {
		return nil, fmt.Errorf("kcptest: creating APIExport %s in %s: %w", name, ws, err)
	}
	err = poll(ctx, "APIExport "+name+" in "+ws.String()+" to get its identity and endpoint slice", func(ctx context.Context) (string, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, export); err != nil {
			return "", err
		}
		if export.Status.IdentityHash == "" {
			return "no identity hash yet", nil
		}
		slice := &apisv1alpha1.APIExportEndpointSlice{}
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, slice); {
		case apierrors.IsNotFound(err):
			return "no APIExportEndpointSlice yet", nil
		case err != nil:
			return "", err
		}
		return "", nil
	})
	if err != nil {
		return nil, err
	}
	return export, nil
}

// Bind creates an APIBinding named name in the consumer workspace that binds the APIExport
// exportName of workspace exportPath, accepting the given permission claims, and waits until it
// is Bound and Ready.
func (s *Server) Bind(ctx context.Context, consumer logicalcluster.Path, name string, exportPath logicalcluster.Path, exportName string, claims ...apisv1alpha1.AcceptablePermissionClaim) (*apisv1alpha1.APIBinding, error) {
	c, err := s.Client(consumer)
	if err != nil {
		return nil, err
	}
	binding := &apisv1alpha1.APIBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apisv1alpha1.APIBindingSpec{
			Reference: apisv1alpha1.BindingReference{
				Export: &apisv1alpha1.ExportBindingReference{Path: exportPath.String(), Name: exportName},
			},
			PermissionClaims: claims,
		},
	}
	if err := c.Create(ctx, binding); err != nil {
		return nil, fmt.Errorf("kcptest: creating APIBinding %s in %s: %w", name, consumer, err)
	}
	err = poll(ctx, "APIBinding "+name+" in "+consumer.String()+" to be Bound", func(ctx context.Context) (string, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, binding); err != nil {
			return "", err
		}
		if binding.Status.Phase != apisv1alpha1.APIBindingPhaseBound || !ready(binding.Status.Conditions) {
			return fmt.Sprintf("phase %q, conditions %s", binding.Status.Phase, describe(binding.Status.Conditions)), nil
		}
		return "", nil
	})
	if err != nil {
		return nil, err
	}
	return binding, nil
}

// DeleteBinding deletes the APIBinding name of the consumer workspace and waits until it is
// gone.
func (s *Server) DeleteBinding(ctx context.Context, consumer logicalcluster.Path, name string) error {
	c, err := s.Client(consumer)
	if err != nil {
		return err
	}
	binding := &apisv1alpha1.APIBinding{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := client.IgnoreNotFound(c.Delete(ctx, binding)); err != nil {
		return fmt.Errorf("kcptest: deleting APIBinding %s in %s: %w", name, consumer, err)
	}
	return poll(ctx, "APIBinding "+name+" in "+consumer.String()+" to be gone", func(ctx context.Context) (string, error) {
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, binding); {
		case apierrors.IsNotFound(err):
			return "", nil
		case err != nil:
			return "", err
		}
		return fmt.Sprintf("phase %q, finalizers %q", binding.Status.Phase, binding.Finalizers), nil
	})
}

// EndpointURLs returns the URLs the APIExportEndpointSlice name of workspace ws lists: the
// APIExport's virtual workspace on each shard where a workspace binds it, in order.
func (s *Server) EndpointURLs(ctx context.Context, ws logicalcluster.Path, name string) ([]string, error) {
	c, err := s.Client(ws)
	if err != nil {
		return nil, err
	}
	slice := &apisv1alpha1.APIExportEndpointSlice{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, slice); err != nil {
		return nil, fmt.Errorf("kcptest: reading APIExportEndpointSlice %s in %s: %w", name, ws, err)
	}
	urls := make([]string, 0, len(slice.Status.APIExportEndpoints))
	for _, ep := range slice.Status.APIExportEndpoints {
		urls = append(urls, ep.URL)
	}
	return urls, nil
}

// WaitEndpointURLs waits until the APIExportEndpointSlice name of workspace ws lists at least
// one URL, and returns them.
func (s *Server) WaitEndpointURLs(ctx context.Context, ws logicalcluster.Path, name string) ([]string, error) {
	var urls []string
	err := poll(ctx, "APIExportEndpointSlice "+name+" in "+ws.String()+" to list an endpoint", func(ctx context.Context) (string, error) {
		var err error
		if urls, err = s.EndpointURLs(ctx, ws, name); err != nil {
			return "", err
		}
		if len(urls) == 0 {
			return "no endpoints", nil
		}
		return "", nil
	})
	return urls, err
}

// CreateWorkspaceType creates in workspace ws a WorkspaceType named name with the given spec
// (Initializer: true for a type whose workspaces wait for an initializer), and waits until it is
// Ready and kcp has published the URLs of its virtual workspaces in its status. It returns the
// type as kcp has it: initialization.InitializerForType names its initializer.
func (s *Server) CreateWorkspaceType(ctx context.Context, ws logicalcluster.Path, name string, spec tenancyv1alpha1.WorkspaceTypeSpec) (*tenancyv1alpha1.WorkspaceType, error) {
	c, err := s.Client(ws)
	if err != nil {
		return nil, err
	}
	wt := &tenancyv1alpha1.WorkspaceType{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
	if err := c.Create(ctx, wt); err != nil {
		return nil, fmt.Errorf("kcptest: creating WorkspaceType %s in %s: %w", name, ws, err)
	}
	err = poll(ctx, "WorkspaceType "+name+" in "+ws.String()+" to be Ready with virtual workspace URLs", func(ctx context.Context) (string, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, wt); err != nil {
			return "", err
		}
		if !ready(wt.Status.Conditions) || len(wt.Status.VirtualWorkspaces) == 0 {
			return fmt.Sprintf("conditions %s, %d virtual workspace URLs", describe(wt.Status.Conditions), len(wt.Status.VirtualWorkspaces)), nil
		}
		return "", nil
	})
	if err != nil {
		return nil, err
	}
	return wt, nil
}

// CreateWorkspaceOfType creates a workspace named name in the parent workspace, of the
// WorkspaceType typeName of workspace typePath, and waits until kcp has given it a logical
// cluster, not until it is Ready: a workspace whose type has an initializer stays in phase
// Initializing until its initializers are done (see WaitWorkspaceReady).
func (s *Server) CreateWorkspaceOfType(ctx context.Context, parent logicalcluster.Path, name string, typePath logicalcluster.Path, typeName string) (Workspace, error) {
	c, err := s.Client(parent)
	if err != nil {
		return Workspace{}, err
	}
	ws := &tenancyv1alpha1.Workspace{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: tenancyv1alpha1.WorkspaceSpec{Type: &tenancyv1alpha1.WorkspaceTypeReference{
			Name: tenancyv1alpha1.WorkspaceTypeName(typeName), Path: typePath.String(),
		}},
	}
	// kcp admits a workspace of a new type once its admission has seen the type: retried.
	err = poll(ctx, "workspace "+name+" of type "+typePath.Join(typeName).String()+" to be created in "+parent.String(), func(ctx context.Context) (string, error) {
		if err := c.Create(ctx, ws.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
			return "", err
		}
		return "", nil
	})
	if err != nil {
		return Workspace{}, err
	}
	path := parent.Join(name)
	err = poll(ctx, "workspace "+path.String()+" to get a logical cluster", func(ctx context.Context) (string, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, ws); err != nil {
			return "", err
		}
		if ws.Spec.Cluster == "" {
			return fmt.Sprintf("phase %q, no logical cluster yet", ws.Status.Phase), nil
		}
		return "", nil
	})
	if err != nil {
		return Workspace{}, err
	}
	return Workspace{Path: path, Cluster: logicalcluster.Name(ws.Spec.Cluster)}, nil
}

// WaitWorkspaceReady waits until the workspace ws is Ready, e.g. once its initializers are done.
func (s *Server) WaitWorkspaceReady(ctx context.Context, ws Workspace) error {
	parent, name := ws.Path.Split()
	c, err := s.Client(parent)
	if err != nil {
		return err
	}
	obj := &tenancyv1alpha1.Workspace{}
	return poll(ctx, "workspace "+ws.Path.String()+" to be Ready", func(ctx context.Context) (string, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			return "", err
		}
		if obj.Status.Phase != corev1alpha1.LogicalClusterPhaseReady {
			return fmt.Sprintf("phase %q, initializers %q", obj.Status.Phase, obj.Status.Initializers), nil
		}
		return "", nil
	})
}

// ready reports whether conditions hold Ready=True.
func ready(conditions conditionsv1alpha1.Conditions) bool {
	for _, c := range conditions {
		if c.Type == conditionsv1alpha1.ReadyCondition {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// describe renders conditions for error messages.
func describe(conditions conditionsv1alpha1.Conditions) string {
	parts := make([]string, 0, len(conditions))
	for _, c := range conditions {
		part := fmt.Sprintf("%s=%s", c.Type, c.Status)
		if c.Reason != "" {
			part += " (" + c.Reason + ": " + c.Message + ")"
		}
		parts = append(parts, part)
	}
	slices.Sort(parts)
	return "[" + strings.Join(parts, ", ") + "]"
}

// poll calls check every 200ms until it reports nothing pending ("") without an error, for at
// most DefaultWaitTimeout or until ctx ends. The error names what was awaited and the last
// state or error seen.
func poll(ctx context.Context, what string, check func(context.Context) (pending string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultWaitTimeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		pending, err := check(ctx)
		switch {
		case err == nil && pending == "":
			return nil
		case err != nil:
			// An error caused by the deadline itself would hide the one that explains it.
			if last == "" || ctx.Err() == nil {
				last = err.Error()
			}
		default:
			last = pending
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kcptest: waiting for %s: %w (last: %s)", what, ctx.Err(), last)
		case <-tick.C:
		}
	}
}
