package kind

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// ready checks that a cluster's API server answers an authenticated request with the cluster's
// credentials, within timeout.
//
// A cluster's cache syncs at once when nothing has asked it for informers yet, so a sync proves
// nothing about the API server. This check does, and it matters for kind: the node container
// and its admin.conf exist before the API server serves (`kind create cluster` is still
// running), and the two engine commands that make up one kubeconfig read (the admin.conf, then
// the published port) can straddle a delete and create, giving one cluster's credentials with
// the other's address. Both fail here and are retried at the next poll, instead of being
// engaged.
//
// GET /api needs an authenticated user (unlike /readyz or /version), so expired or revoked
// credentials fail too. It uses the cluster's own HTTP client, whose connections the cluster
// closes when it stops.
func ready(ctx context.Context, cl cluster.Cluster, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	url := strings.TrimSuffix(cl.GetConfig().Host, "/") + "/api"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := cl.GetHTTPClient().Do(req)
	if err != nil {
		return fmt.Errorf("API server does not answer: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) // lets the connection be reused
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("API server answered GET /api with %s", resp.Status)
	}
	return nil
}
