package kubeconfig

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"

	"mcr.dev/core/kubeconfig"
)

// Reasons of the Events the provider records on Secrets and of the
// mcr_kubeconfig_provider_errors_total metric. Kubeconfigs refused by the Policy or undecodable
// get the Event reason ReasonInvalidKubeconfig; their metric reason is finer, one of the
// kubeconfig.Reason* values (ExecPlugin, AuthProviderPlugin, LocalFileReference, InsecureTLS,
// InvalidKubeconfig).
const (
	// ReasonInvalidKubeconfig (Warning): the Secret's kubeconfig was refused. Not retried until the
	// Secret changes.
	ReasonInvalidKubeconfig = kubeconfig.ReasonInvalid
	// ReasonMissingKubeconfig (metric only; Event reason InvalidKubeconfig): the data key is
	// missing or empty.
	ReasonMissingKubeconfig = "MissingKubeconfig"
	// ReasonClusterSetupFailed (metric only; Event reason InvalidKubeconfig): RESTOptions or
	// cluster.New failed for the member.
	ReasonClusterSetupFailed = "ClusterSetupFailed"
	// ReasonClusterNameConflict (Warning): another Secret owns the cluster name.
	ReasonClusterNameConflict = "ClusterNameConflict"
	// ReasonUnauthorized (Warning): the member refused the credentials. Retried with backoff.
	ReasonUnauthorized = "Unauthorized"
	// ReasonClusterUnreachable (Warning): the member did not answer or its cache did not sync
	// within Options.CacheSyncTimeout. Retried with backoff.
	ReasonClusterUnreachable = "ClusterUnreachable"
	// ReasonEngageFailed (Warning): engaging the cluster failed. Retried with backoff.
	ReasonEngageFailed = "EngageFailed"
	// ReasonClusterEngaged (Normal): the Secret's cluster is engaged with its current kubeconfig.
	ReasonClusterEngaged = "ClusterEngaged"
)

// eventAction is the action of every Event the provider records.
const eventAction = "Engage"

// maxNoteBytes is the limit the events.k8s.io API puts on an Event's note.
const maxNoteBytes = 1024

// eventRecorder returns Options.EventRecorder, or starts a recorder of its own on the host and
// returns a func that stops it.
func (p *Provider) eventRecorder(ctx context.Context) (events.EventRecorder, func(), error) {
	if p.opts.EventRecorder != nil {
		return p.opts.EventRecorder, func() {}, nil
	}
	cs, err := kubernetes.NewForConfigAndClient(p.host.GetConfig(), p.host.GetHTTPClient())
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig provider: creating event client: %w", err)
	}
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		return nil, nil, fmt.Errorf("kubeconfig provider: starting event recorder: %w", err)
	}
	return b.NewRecorder(p.host.GetScheme(), EventSource), b.Shutdown, nil
}

// event records an Event on a Secret.
func (p *Provider) event(s *corev1.Secret, eventType, reason, note string) {
	p.mu.Lock()
	rec := p.recorder
	p.mu.Unlock()
	if rec == nil {
		return
	}
	if len(note) > maxNoteBytes {
		note = note[:maxNoteBytes-3] + "..."
	}
	// The note is passed as an argument, not a format, as it may contain '%'.
	rec.Eventf(s, nil, eventType, reason, eventAction, "%s", note)
}

// fail reports a Secret that could not be turned into an engaged cluster: a Warning Event on the
// Secret, an error log line and the error counter. err must not contain credentials; the
// provider's errors name Secrets and fields, never kubeconfig values.
func (p *Provider) fail(s *corev1.Secret, log logr.Logger, eventReason, metricReason string, err error) {
	secretErrors.WithLabelValues(metricReason).Inc()
	log.Error(err, "Kubeconfig Secret not engaged", "reason", metricReason)
	p.event(s, corev1.EventTypeWarning, eventReason, err.Error())
}
