package kubeconfig

import (
	"bytes"
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// watchSecrets registers the provider's event handler on the host's Secret informer and waits,
// at most Options.CacheSyncTimeout, until the handler has seen every existing Secret. The
// returned func removes the handler.
func (p *Provider) watchSecrets(ctx context.Context) (stop func(), err error) {
	getCtx, cancel := context.WithTimeout(ctx, p.opts.CacheSyncTimeout)
	defer cancel()
	informer, err := p.host.GetCache().GetInformer(getCtx, &corev1.Secret{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, fmt.Errorf("kubeconfig provider: getting the host's Secret informer: %w", err)
	}
	reg, err := informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if s, ok := obj.(*corev1.Secret); ok && p.selects(s) {
				p.queue.Add(keyOf(s))
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := oldObj.(*corev1.Secret)
			n, okNew := newObj.(*corev1.Secret)
			if okOld && okNew && p.relevantChange(o, n) {
				p.queue.Add(keyOf(n))
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if s, ok := obj.(*corev1.Secret); ok {
				p.queue.Add(keyOf(s))
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("kubeconfig provider: watching the host's Secrets: %w", err)
	}
	stop = func() { _ = informer.RemoveEventHandler(reg) }

	if !waitFor(getCtx, reg.HasSynced) {
		stop()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("kubeconfig provider: waiting for the host's Secrets: %w", ctx.Err())
		}
		return nil, fmt.Errorf("kubeconfig provider: the host's Secrets did not sync within %s", p.opts.CacheSyncTimeout)
	}
	return stop, nil
}

// waitFor polls done until it reports true or ctx ends.
func waitFor(ctx context.Context, done func() bool) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return done()
		case <-tick.C:
		}
	}
	return true
}

func keyOf(s *corev1.Secret) types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: s.Name}
}

// selects reports whether s is a kubeconfig Secret this provider serves. The provider's own host
// cache holds only such Secrets, but a shared cache (NewForHost) holds all of them.
func (p *Provider) selects(s *corev1.Secret) bool {
	if !p.opts.AllNamespaces && s.Namespace != p.opts.Namespace {
		return false
	}
	return p.selector.Matches(labels.Set(s.Labels))
}

// relevantChange reports whether an update of a Secret can change what the provider does:
// it became or stopped being selected, its kubeconfig changed, its deletion began, or it maps to
// another cluster name. Metadata-only edits are dropped here, before any work.
func (p *Provider) relevantChange(o, n *corev1.Secret) bool {
	selOld, selNew := p.selects(o), p.selects(n)
	if !selOld && !selNew {
		return false
	}
	return selOld != selNew ||
		!bytes.Equal(o.Data[p.opts.SecretKey], n.Data[p.opts.SecretKey]) ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) ||
		p.opts.ClusterName(o) != p.opts.ClusterName(n)
}

// readSecret returns the Secret from the host cache, or nil when it is gone or no longer selected.
func (p *Provider) readSecret(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := p.host.GetCache().Get(ctx, key, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if !p.selects(s) || s.DeletionTimestamp != nil {
		return nil, nil
	}
	return s, nil
}
