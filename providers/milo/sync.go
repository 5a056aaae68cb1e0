// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package milo

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"mcr.dev/core/providers/kit"
	"mcr.dev/core/redact"
)

// sync brings the engagement of one project in line with its object (Project or
// ProjectControlPlane, after the Mode).
func (p *Provider) sync(ctx context.Context, project string) kit.Result {
	name := ClusterName(project)
	kind := p.opts.Mode.kind()
	obj := p.opts.Mode.newObject()
	if res, ok := p.engine.GetHostObject(ctx, p.host.GetCache(), client.ObjectKey{Name: project}, obj, name, func() kit.Result {
		p.setUnreadySince(project, time.Time{})
		p.engine.Disengage(name, nil, "the "+kind+" is gone")
		return kit.Result{}
	}); !ok {
		return res
	}
	if !p.selects(obj) {
		p.setUnreadySince(project, time.Time{})
		p.engine.Disengage(name, obj, "the "+kind+" is not selected by the provider's options")
		return kit.Result{}
	}
	if !p.opts.IsReady(ctx, obj) {
		return p.unready(project, obj)
	}
	if !p.setUnreadySince(project, time.Time{}).IsZero() && p.engine.IsEngaged(name) {
		p.engine.Logger().Info("Project is ready again within the grace period; its cluster stayed engaged", "cluster", name)
	}

	if p.opts.checkProject != nil {
		if err := p.opts.checkProject(project); err != nil {
			return p.engine.Fail(project, kit.Member{Name: name, Regarding: obj}, kit.Permanent(kit.ReasonClusterSetupFailed, err))
		}
	}

	// The provider presents its own credentials to every control plane: the config is BaseConfig
	// pointed at the project's control plane.
	cfg := rest.CopyConfig(p.opts.BaseConfig)
	cfg.Host, cfg.APIPath = p.opts.ControlPlaneHost(project), ""
	return p.engine.Engage(ctx, project, kit.Member{Name: name, Config: cfg, Regarding: obj, From: "the control plane at " + redact.Text(cfg.Host)})
}

// unready handles a selected object that is not ready: an engaged project keeps its cluster for
// the grace period and is disengaged when it is still unready at its end; a project that is
// not engaged stays so.
func (p *Provider) unready(project string, obj client.Object) kit.Result {
	name, kind, grace := ClusterName(project), p.opts.Mode.kind(), p.opts.UnreadyGracePeriod
	if !p.engine.IsEngaged(name) || grace < 0 {
		p.setUnreadySince(project, time.Time{})
		p.engine.Disengage(name, obj, "the "+kind+" is not ready")
		return kit.Result{}
	}
	now := time.Now()
	since := p.getUnreadySince(project)
	if since.IsZero() {
		since = now
		p.setUnreadySince(project, now)
		p.engine.Logger().Info("Project is not ready; its cluster stays engaged for the grace period", "cluster", name, "gracePeriod", grace)
		p.engine.Record(obj, nil, corev1.EventTypeNormal, ReasonProjectUnready,
			fmt.Sprintf("The %s is not ready; its control plane stays engaged for %s and is disengaged if it is not ready by then", kind, grace))
	}
	if left := grace - now.Sub(since); left > 0 {
		return kit.Result{After: left}
	}
	p.setUnreadySince(project, time.Time{})
	p.engine.Disengage(name, obj, fmt.Sprintf("the %s has not been ready for the grace period (%s)", kind, grace))
	return kit.Result{}
}

// getUnreadySince returns when the engaged project was first seen unready; zero while it is
// ready or not engaged.
func (p *Provider) getUnreadySince(project string) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unreadySince[project]
}

// setUnreadySince sets when the project was first seen unready (zero forgets it) and returns
// the previous value.
func (p *Provider) setUnreadySince(project string, t time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.unreadySince[project]
	if t.IsZero() {
		delete(p.unreadySince, project)
	} else {
		p.unreadySince[project] = t
	}
	return old
}
