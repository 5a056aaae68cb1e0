// Package reconcileloop holds the pieces that providers driven by objects on a host cluster
// (Cluster API Clusters, Gardener Shoots, ClusterProfiles, Milo Projects, ...) share, so that a
// provider author writes only what is particular to the provider: how an object maps to a key,
// how one key is synced, and which reasons and metrics it reports.
//
// A provider's Start typically runs them in this order:
//
//   - RunHost starts the host cluster the provider built itself and turns its stopping into
//     Start's error;
//   - New builds a Loop: a rate-limited queue whose keys are synced in parallel, each key by one
//     goroutine at a time, retried with exponential backoff and resynced periodically;
//   - WatchHost adds event handlers to the host's informers that enqueue keys into the Loop, and
//     waits for them to sync with an error that says what is probably missing;
//   - Loop.Run processes keys until Start's context ends.
//
// While syncing, Problems reports per-key problems (a broken gauge, and a log line and a Warning
// Event only when the problem changes), Events records Events with notes the events.k8s.io API
// accepts, and ApplyRESTOptions finishes a member's rest.Config the way every provider does.
// Durations applies the defaults of the Options fields these pieces use (cache sync timeout,
// retry delays, resync period), so that a provider's defaults match the Loop's.
//
// The package keeps no global state and registers no metrics: the provider passes its own.
package reconcileloop
