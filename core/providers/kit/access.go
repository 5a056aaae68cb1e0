package kit

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"

	"sigs.k8s.io/controller-runtime/pkg/cluster"
)

// ErrUnauthorized is returned (wrapped) by CheckAccess when the member refused the credentials.
var ErrUnauthorized = errors.New("the member refused the credentials (401 Unauthorized)")

// ErrUnreachable is returned (wrapped) by CheckAccess when the member did not answer as an API
// server.
var ErrUnreachable = errors.New("the member did not answer")

// CheckAccess asks the member who the credentials are, with a SelfSubjectReview: it proves
// that the member answers and accepts the credentials, and needs no RBAC beyond what every
// authenticated user has. A Forbidden or NotFound answer (reviews not allowed or not served)
// still proves both. The error wraps ErrUnauthorized or ErrUnreachable and never contains the
// member's address or credentials: a URL may carry secrets, and the error ends up in Events.
func CheckAccess(ctx context.Context, cl cluster.Cluster) error {
	return checkAccess(ctx, cl, false)
}

// CheckServed is CheckAccess for members behind a front door that routes by path: a NotFound
// answer means that nothing serves the member's path, and is ErrUnreachable.
func CheckServed(ctx context.Context, cl cluster.Cluster) error {
	return checkAccess(ctx, cl, true)
}

func checkAccess(ctx context.Context, cl cluster.Cluster, notFoundIsUnreachable bool) error {
	c, err := authenticationv1client.NewForConfigAndClient(cl.GetConfig(), cl.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("%w: creating a client: %w", ErrUnreachable, err)
	}
	_, err = c.SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	switch {
	case apierrors.IsNotFound(err) && notFoundIsUnreachable:
		return fmt.Errorf("%w: %s", ErrUnreachable, describe(err))
	case err == nil, apierrors.IsForbidden(err), apierrors.IsNotFound(err):
		return nil
	case apierrors.IsUnauthorized(err):
		return ErrUnauthorized
	case ctx.Err() != nil:
		return fmt.Errorf("%w within the access check's time limit", ErrUnreachable)
	}
	return fmt.Errorf("%w: %s", ErrUnreachable, describe(err))
}

// describe names what went wrong with a request without repeating the request's URL, which
// may carry credentials in its user info or query.
func describe(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		return fmt.Sprintf("the answer was %d %s", s.Code, s.Reason)
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.Err != nil {
		return urlErr.Err.Error()
	}
	return err.Error()
}
