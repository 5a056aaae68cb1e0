package kcp_test

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kcp-dev/logicalcluster/v3"
	apisv1alpha1 "github.com/kcp-dev/sdk/apis/apis/v1alpha1"

	mcr "mcr.dev/core"
	"mcr.dev/providers/kcp"
)

// Run a controller over every workspace that binds the APIExport "widgets": the config points
// at the workspace of the APIExport, where kcp keeps the APIExportEndpointSlice of the same
// name. The manager starts the provider, which engages each logical cluster whose APIBinding is
// ready.
func Example() {
	cfg := mcr.GetConfigOrDie() // e.g. https://kcp.example.com/clusters/root:widgets-provider
	provider, err := kcp.New(cfg, "widgets", kcp.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	mgr, err := mcr.NewManager(cfg, provider, mcr.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = mcr.NewControllerManagedBy(mgr).
		Named("configmaps").
		For(&corev1.ConfigMap{}). // a resource the APIExport claims
		Complete(mcr.Func(func(ctx context.Context, req mcr.Request) (mcr.Result, error) {
			// req.ClusterName is the logical cluster name (kcp.io/cluster).
			mcr.LoggerFrom(ctx).Info("Reconciling", "cluster", req.ClusterName, "configmap", req.NamespacedName)
			return mcr.Result{}, nil
		}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := mgr.Start(mcr.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Engage every logical cluster that binds the export, ready or not, and find a cluster by its
// workspace path.
func Example_options() {
	provider, err := kcp.New(mcr.GetConfigOrDie(), "widgets", kcp.Options{
		IsReady: func(context.Context, client.Object) bool { return true },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Once the manager runs the provider:
	if cl, err := provider.GetByPath(context.Background(), logicalcluster.NewPath("root:org:team")); err == nil {
		_ = cl.GetClient() // writes to <virtual workspace>/clusters/<logical cluster>
	}
}

// The endpoints of an APIExportEndpointSlice are the URLs of the APIExport's virtual workspace
// on each shard; the provider runs one shared cache per URL.
func ExampleEndpointURLs() {
	slice := &apisv1alpha1.APIExportEndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets"},
		Status: apisv1alpha1.APIExportEndpointSliceStatus{APIExportEndpoints: []apisv1alpha1.APIExportEndpoint{
			{URL: "https://shard-1.kcp.example.com/services/apiexport/root/widgets/"},
			{URL: "https://shard-2.kcp.example.com/services/apiexport/root/widgets"},
		}},
	}
	for _, url := range kcp.EndpointURLs(slice) {
		fmt.Println(url + logicalcluster.Wildcard.RequestPath())
	}
	// Output:
	// https://shard-1.kcp.example.com/services/apiexport/root/widgets/clusters/*
	// https://shard-2.kcp.example.com/services/apiexport/root/widgets/clusters/*
}
