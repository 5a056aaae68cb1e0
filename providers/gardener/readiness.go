// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package gardener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
)

// ShootUsable reports whether a Shoot's API server can be used, the default of Options.IsReady
// with TopologyGarden. A Shoot is usable when all of these hold:
//
//  1. it is not being deleted (no deletionTimestamp);
//  2. it is neither hibernated nor on its way there or back: spec.hibernation.enabled is not
//     true and status.hibernated is false (a waking Shoot becomes usable once gardenlet reports
//     it awake);
//  3. status.lastOperation is set, and if its type is Create, its state is Succeeded: a Shoot
//     still being created, or whose creation failed, has no API server to talk to, while any
//     later operation (Reconcile, Migrate, Restore, ...) in any state leaves it usable;
//  4. its APIServerAvailable condition is not False. True, Progressing (health checks failing
//     but still within Gardener's threshold), Unknown (gardenlet has lost contact) and a
//     condition not reported yet all count as usable: none of them says the API server is down.
//
// ShootProblem says which of the rules a Shoot breaks.
func ShootUsable(_ context.Context, shoot *gardencorev1beta1.Shoot) bool {
	return ShootProblem(shoot) == ""
}

// ShootAwake reports whether a Shoot is neither being deleted nor hibernated (rules 1 and 2 of
// ShootUsable). It is the default of Options.IsReady with TopologySeed, where the Shoot is the
// copy gardenlet embeds in the Cluster object and its status (last operation, conditions) is only
// refreshed when gardenlet reconciles the Shoot, while deletion and hibernation are always
// written there first.
func ShootAwake(_ context.Context, shoot *gardencorev1beta1.Shoot) bool {
	return awakeProblem(shoot) == ""
}

// ShootProblem returns why ShootUsable considers a Shoot unusable, or "" when it is usable.
func ShootProblem(shoot *gardencorev1beta1.Shoot) string {
	if p := awakeProblem(shoot); p != "" {
		return p
	}
	op := shoot.Status.LastOperation
	switch {
	case op == nil:
		return "the Shoot has no last operation yet"
	case op.Type == gardencorev1beta1.LastOperationTypeCreate && op.State != gardencorev1beta1.LastOperationStateSucceeded:
		return fmt.Sprintf("the Shoot's creation has not succeeded (last operation Create, state %s)", op.State)
	}
	for _, c := range shoot.Status.Conditions {
		if c.Type == gardencorev1beta1.ShootAPIServerAvailable && c.Status == gardencorev1beta1.ConditionFalse {
			return "the Shoot's condition APIServerAvailable is False"
		}
	}
	return ""
}

func awakeProblem(shoot *gardencorev1beta1.Shoot) string {
	switch {
	case shoot.DeletionTimestamp != nil:
		return "the Shoot is being deleted"
	case shoot.Spec.Hibernation != nil && shoot.Spec.Hibernation.Enabled != nil && *shoot.Spec.Hibernation.Enabled:
		return "the Shoot is hibernated or hibernating (spec.hibernation.enabled)"
	case shoot.Status.IsHibernated:
		return "the Shoot is hibernated (status.hibernated)"
	}
	return ""
}

// ShootOfCluster decodes the Shoot gardenlet embeds in an extensions Cluster object
// (spec.shoot).
func ShootOfCluster(c *extensionsv1alpha1.Cluster) (*gardencorev1beta1.Shoot, error) {
	if s, ok := c.Spec.Shoot.Object.(*gardencorev1beta1.Shoot); ok && s != nil {
		return s, nil
	}
	raw := c.Spec.Shoot.Raw
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("spec.shoot is empty")
	}
	shoot := &gardencorev1beta1.Shoot{}
	if err := json.Unmarshal(raw, shoot); err != nil {
		return nil, fmt.Errorf("spec.shoot is not a Shoot: %s", decodeProblem(err))
	}
	return shoot, nil
}

// decodeProblem describes an error of json.Unmarshal without the values it may quote: the
// decoders of fields (timestamps, quantities, ...) quote the value they refuse, and the
// embedded Shoot is the cluster owner's data.
func decodeProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return fmt.Sprintf("field %s holds a JSON %s, want %s", typeErr.Field, typeErr.Value, typeErr.Type)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("invalid JSON at offset %d", syntaxErr.Offset)
	}
	return "a field has a value that does not decode"
}

// selects reports whether the options select a Shoot: its namespace, labels and Options.Filter.
// The garden cache already holds only the selected namespaces; the seed's Cluster objects are
// filtered by the namespace of their Shoot here.
func (p *Provider) selects(ctx context.Context, shoot *gardencorev1beta1.Shoot) bool {
	o := p.opts
	if !p.inNamespaces(shoot.Namespace) {
		return false
	}
	if o.Selector != nil && !o.Selector.Matches(labels.Set(shoot.Labels)) {
		return false
	}
	return o.Filter == nil || o.Filter(ctx, shoot)
}

// notEngaged says why the provider does not engage shoot in either topology: it is not
// selected, or not usable. It is empty for a Shoot the provider engages.
func (p *Provider) notEngaged(ctx context.Context, shoot *gardencorev1beta1.Shoot) string {
	switch {
	case !p.selects(ctx, shoot):
		return "the Shoot is not selected by the provider's options"
	case !p.opts.IsReady(ctx, shoot):
		return p.unusable(shoot)
	}
	return ""
}

// unusable explains why a selected Shoot is not engaged.
func (p *Provider) unusable(shoot *gardencorev1beta1.Shoot) string {
	if !p.opts.defaultIsReady {
		return "the Shoot is not usable (Options.IsReady)"
	}
	if p.opts.Topology == TopologySeed {
		return awakeProblem(shoot)
	}
	return ShootProblem(shoot)
}
