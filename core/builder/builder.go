// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package builder

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	mccontroller "mcr.dev/core/controller"
	mchandler "mcr.dev/core/handler"
	mcmanager "mcr.dev/core/manager"
	mcreconcile "mcr.dev/core/reconcile"
	mcsource "mcr.dev/core/source"
)

// Builder builds multi-cluster controllers of mcreconcile.Request.
type Builder = TypedBuilder[mcreconcile.Request]

// TypedBuilder builds multi-cluster controllers of a custom request type.
type TypedBuilder[request mcreconcile.ClusterAware[request]] struct {
	mgr              mcmanager.Manager
	name             string
	forObject        client.Object
	forInput         ForInput
	owns             []ownsWatch
	watches          []watchesWatch[request]
	mcSources        []mcsource.TypedSource[client.Object, request]
	rawSources       []source.TypedSource[request]
	globalPredicates []predicate.Predicate
	options          controller.TypedOptions[request]
	// multiClusterOptions are passed to mccontroller.NewTyped (WithMultiClusterOptions).
	multiClusterOptions []mccontroller.Option
	logConstructor      func(*request) logr.Logger
	notFoundWrapper     bool
	err                 error
}

type ownsWatch struct {
	object client.Object
	input  OwnsInput
}

type watchesWatch[request mcreconcile.ClusterAware[request]] struct {
	object  client.Object
	handler mchandler.TypedEventHandlerFunc[client.Object, request]
	input   WatchesInput
}

// ControllerManagedBy starts building a controller of mcreconcile.Request run by m.
func ControllerManagedBy(m mcmanager.Manager) *Builder {
	return TypedControllerManagedBy[mcreconcile.Request](m)
}

// TypedControllerManagedBy starts building a controller of a custom request type run by m.
func TypedControllerManagedBy[request mcreconcile.ClusterAware[request]](m mcmanager.Manager) *TypedBuilder[request] {
	return &TypedBuilder[request]{mgr: m, notFoundWrapper: true}
}

// For declares the type the controller reconciles; its events enqueue the object itself. Only
// available for mcreconcile.Request; other request types use Watches.
func (b *TypedBuilder[request]) For(object client.Object, opts ...ForOption) *TypedBuilder[request] {
	if b.forObject != nil {
		b.err = errors.Join(b.err, errors.New("For(...) should only be called once, could not assign multiple objects for reconciliation"))
		return b
	}
	b.forObject = object
	for _, o := range opts {
		o.ApplyToFor(&b.forInput)
	}
	return b
}

// Owns watches objects owned by the For type and enqueues their controller owner (or every
// owner with MatchEveryOwner), resolved with the cluster's scheme and RESTMapper.
func (b *TypedBuilder[request]) Owns(object client.Object, opts ...OwnsOption) *TypedBuilder[request] {
	w := ownsWatch{object: object}
	for _, o := range opts {
		o.ApplyToOwns(&w.input)
	}
	b.owns = append(b.owns, w)
	return b
}

// Watches watches object in every covered cluster and hands its events to the handler built for
// that cluster.
func (b *TypedBuilder[request]) Watches(object client.Object, h mchandler.TypedEventHandlerFunc[client.Object, request], opts ...WatchesOption) *TypedBuilder[request] {
	w := watchesWatch[request]{object: object, handler: h}
	for _, o := range opts {
		o.ApplyToWatches(&w.input)
	}
	b.watches = append(b.watches, w)
	return b
}

// WatchesMetadata is Watches with OnlyMetadata.
func (b *TypedBuilder[request]) WatchesMetadata(object client.Object, h mchandler.TypedEventHandlerFunc[client.Object, request], opts ...WatchesOption) *TypedBuilder[request] {
	return b.Watches(object, h, append(opts, OnlyMetadata)...)
}

// WatchesMultiClusterSource watches a custom multi-cluster source in every engaged cluster. The
// controller's global predicates do not apply; the source filters itself.
func (b *TypedBuilder[request]) WatchesMultiClusterSource(src mcsource.TypedSource[client.Object, request]) *TypedBuilder[request] {
	b.mcSources = append(b.mcSources, src)
	return b
}

// WatchesRawSource watches a plain controller-runtime source once, not per cluster (for example
// a channel source). Its requests must name their cluster.
func (b *TypedBuilder[request]) WatchesRawSource(src source.TypedSource[request]) *TypedBuilder[request] {
	b.rawSources = append(b.rawSources, src)
	return b
}

// WithEventFilter adds predicates applied to every For, Owns and Watches.
func (b *TypedBuilder[request]) WithEventFilter(p predicate.Predicate) *TypedBuilder[request] {
	b.globalPredicates = append(b.globalPredicates, p)
	return b
}

// WithOptions sets controller options; unset fields are defaulted from the manager.
func (b *TypedBuilder[request]) WithOptions(options controller.TypedOptions[request]) *TypedBuilder[request] {
	b.options = options
	return b
}

// WithMultiClusterOptions adds options of mcr's multi-cluster side of the controller, such as
// mccontroller.WithParkedRetryMax; the builder adds mccontroller.WithLocalCluster itself when a
// watch engages the local cluster.
func (b *TypedBuilder[request]) WithMultiClusterOptions(opts ...mccontroller.Option) *TypedBuilder[request] {
	b.multiClusterOptions = append(b.multiClusterOptions, opts...)
	return b
}

// WithLogConstructor replaces the default log constructor, which adds controller-runtime's keys
// (controller, controllerGroup, controllerKind, the For kind's object, namespace, name,
// reconcileID) and the cluster; see mccontroller.WithForKind.
func (b *TypedBuilder[request]) WithLogConstructor(c func(*request) logr.Logger) *TypedBuilder[request] {
	b.logConstructor = c
	return b
}

// Named sets the controller name, which must be unique. It defaults to the lowercased kind of
// the For type.
func (b *TypedBuilder[request]) Named(name string) *TypedBuilder[request] {
	b.name = name
	return b
}

// WithClusterNotFoundWrapper turns off (false) the default ending of requests whose cluster has
// left the fleet without error.
func (b *TypedBuilder[request]) WithClusterNotFoundWrapper(enabled bool) *TypedBuilder[request] {
	b.notFoundWrapper = enabled
	return b
}

// Complete builds the controller and adds it to the manager.
func (b *TypedBuilder[request]) Complete(r reconcile.TypedReconciler[request]) error {
	_, err := b.Build(r)
	return err
}

// Build builds the controller, adds it to the manager and returns it.
func (b *TypedBuilder[request]) Build(r reconcile.TypedReconciler[request]) (mccontroller.TypedController[request], error) {
	// The checks, their order and their texts are multicluster-runtime's, so that a program
	// ported from it fails the same way.
	if r == nil {
		return nil, errors.New("must provide a non-nil Reconciler")
	}
	if b.mgr == nil {
		return nil, errors.New("must provide a non-nil Manager")
	}
	if b.err != nil {
		return nil, b.err
	}
	if b.options.Reconciler != nil {
		return nil, errors.New("reconciler was set via WithOptions() and via Build() or Complete()")
	}
	if b.forObject != nil && reflect.TypeFor[request]() != reflect.TypeFor[mcreconcile.Request]() {
		return nil, fmt.Errorf("For() can only be used with mcreconcile.Request, got %T", *new(request))
	}
	if len(b.owns) > 0 && b.forObject == nil {
		return nil, errors.New("Owns() can only be used together with For()")
	}
	if b.forObject == nil && len(b.watches) == 0 && len(b.mcSources) == 0 && len(b.rawSources) == 0 {
		return nil, errors.New("there are no watches configured, controller will never get triggered. Use For(), Owns(), Watches() or WatchesRawSource() to set them up")
	}
	name, err := b.controllerName()
	if err != nil {
		return nil, err
	}
	sources, err := b.sources()
	if err != nil {
		return nil, err
	}

	opts := b.options
	if b.notFoundWrapper {
		r = mcreconcile.NewClusterNotFoundWrapper(r)
	}
	opts.Reconciler = r
	if b.logConstructor != nil {
		opts.LogConstructor = b.logConstructor
	}
	ctrlOpts := slices.Clone(b.multiClusterOptions)
	// The local scheme need not know the For type (a fleet's clusters need not share a scheme):
	// then its kind stays out of the logs and GroupKindConcurrency does not apply.
	if gvk, err := b.forKind(); err == nil {
		if n, ok := b.mgr.GetControllerOptions().GroupKindConcurrency[gvk.GroupKind().String()]; ok && n > 0 && opts.MaxConcurrentReconciles == 0 {
			opts.MaxConcurrentReconciles = n
		}
		ctrlOpts = append(ctrlOpts, mccontroller.WithForKind(gvk.GroupKind()))
	}
	if b.wantsLocal() {
		ctrlOpts = append(ctrlOpts, mccontroller.WithLocalCluster())
	}
	c, err := mccontroller.NewTyped(name, b.mgr, opts, ctrlOpts...)
	if err != nil {
		return nil, err
	}
	for _, src := range sources {
		if err := c.MultiClusterWatch(src); err != nil {
			return nil, err
		}
	}
	for _, src := range b.rawSources {
		if err := c.Watch(src); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (b *TypedBuilder[request]) wantsLocal() bool {
	if b.forInput.engage.wantsLocal() {
		return true
	}
	for _, w := range b.owns {
		if w.input.engage.wantsLocal() {
			return true
		}
	}
	for _, w := range b.watches {
		if w.input.engage.wantsLocal() {
			return true
		}
	}
	return false
}

// sources turns For, Owns and Watches into multi-cluster sources.
func (b *TypedBuilder[request]) sources() ([]mcsource.TypedSource[client.Object, request], error) {
	var sources []mcsource.TypedSource[client.Object, request]
	if b.forObject != nil {
		var h mchandler.TypedEventHandlerFunc[client.Object, request]
		// For is only allowed for mcreconcile.Request, checked above, so this conversion holds.
		reflect.ValueOf(&h).Elem().Set(reflect.ValueOf(mchandler.TypedEnqueueRequestForObject[client.Object]()))
		sources = append(sources, b.kind(b.forObject, h, b.forInput.watchInput))
	}
	for _, w := range b.owns {
		var h mchandler.TypedEventHandlerFunc[client.Object, request]
		var ownerOpts []handler.OwnerOption
		if !w.input.matchEveryOwner {
			ownerOpts = append(ownerOpts, handler.OnlyControllerOwner())
		}
		reflect.ValueOf(&h).Elem().Set(reflect.ValueOf(mchandler.TypedEnqueueRequestForOwner[client.Object](b.forObject, ownerOpts...)))
		sources = append(sources, b.kind(w.object, h, w.input.watchInput))
	}
	for _, w := range b.watches {
		if w.handler == nil {
			return nil, fmt.Errorf("Watches(%T): handler must not be nil", w.object)
		}
		sources = append(sources, b.kind(w.object, w.handler, w.input.watchInput))
	}
	return append(sources, b.mcSources...), nil
}

func (b *TypedBuilder[request]) kind(obj client.Object, h mchandler.TypedEventHandlerFunc[client.Object, request], in watchInput) mcsource.TypedSource[client.Object, request] {
	predicates := append(append([]predicate.Predicate(nil), b.globalPredicates...), in.predicates...)
	src := mcsource.TypedKind[client.Object, request](obj, h, predicates...).WithClusterFilter(in.engage.filter())
	if in.onlyMetadata {
		src = src.WithProjection(projectToMetadata)
	}
	return src
}

// projectToMetadata resolves the kind with the cluster's own scheme: clusters of one fleet need
// not share a scheme.
func projectToMetadata(cl cluster.Cluster, obj client.Object) (client.Object, error) {
	gvk, err := apiutil.GVKForObject(obj, cl.GetScheme())
	if err != nil {
		return nil, fmt.Errorf("determining the kind of %T for a metadata-only watch: %w", obj, err)
	}
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(gvk)
	return meta, nil
}

// forKind is the kind of the For type in the local cluster's scheme.
func (b *TypedBuilder[request]) forKind() (schema.GroupVersionKind, error) {
	if b.forObject == nil {
		return schema.GroupVersionKind{}, errors.New("no For type")
	}
	return apiutil.GVKForObject(b.forObject, b.mgr.GetLocalManager().GetScheme())
}

func (b *TypedBuilder[request]) controllerName() (string, error) {
	if b.name != "" {
		return b.name, nil
	}
	if b.forObject == nil {
		return "", errors.New("one of For() or Named() must be called")
	}
	gvk, err := b.forKind()
	if err != nil {
		return "", fmt.Errorf("naming the controller after %T: %w (use Named)", b.forObject, err)
	}
	return strings.ToLower(gvk.Kind), nil
}

// compile-time checks that the options implement what they claim.
var (
	_ ForOption     = Predicates{}
	_ OwnsOption    = Predicates{}
	_ WatchesOption = Predicates{}
	_ ForOption     = EngageOptions{}
	_ OwnsOption    = EngageOptions{}
	_ WatchesOption = EngageOptions{}
)
