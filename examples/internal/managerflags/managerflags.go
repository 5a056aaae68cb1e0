// Package managerflags holds the command-line flags every example program shares: the host
// cluster's kubeconfig, the metrics and health probe addresses, leader election and logging.
// They are the flags a kubebuilder-generated main has, so the examples read like real
// controllers; the provider-specific flags stay in each example's main.go.
package managerflags

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	mcr "mcr.dev/core"
	mcmanager "mcr.dev/core/manager"
)

// Flags are the values of the shared flags after parsing.
type Flags struct {
	// Kubeconfig is the host cluster's kubeconfig file: the cluster the manager itself talks to
	// (leader election, metrics authentication, and the provider's source of truth where it has
	// one). Default: in-cluster config, then $KUBECONFIG, then ~/.kube/config.
	Kubeconfig string
	// MetricsAddr is the metrics endpoint's address; "0" turns it off. Default ":8080".
	MetricsAddr string
	// ProbeAddr is the health probe endpoint's address; "0" turns it off. Default ":8081".
	ProbeAddr string
	// LeaderElect enables leader election, so that only one replica reconciles. Default false.
	LeaderElect bool
	// LeaderElectionID names the Lease used for leader election. Default: the program's name
	// under the domain examples.mcr.dev.
	LeaderElectionID string
	// LeaderElectionNamespace is the namespace of the Lease. Default: the namespace the pod runs
	// in (controller-runtime's default).
	LeaderElectionNamespace string

	zap zap.Options
}

// Bind registers the shared flags on fs for the program called name and returns where their
// values end up once fs is parsed.
func Bind(fs *flag.FlagSet, name string) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "",
		"kubeconfig of the host cluster, the one the manager runs against (default: in-cluster config, $KUBECONFIG, ~/.kube/config)")
	fs.StringVar(&f.MetricsAddr, "metrics-bind-address", ":8080", "address the metrics endpoint binds to; 0 disables it")
	fs.StringVar(&f.ProbeAddr, "health-probe-bind-address", ":8081", "address the health probe endpoint binds to; 0 disables it")
	fs.BoolVar(&f.LeaderElect, "leader-elect", false, "enable leader election, so that only one replica reconciles at a time")
	fs.StringVar(&f.LeaderElectionID, "leader-election-id", name+".examples.mcr.dev", "name of the Lease used for leader election")
	fs.StringVar(&f.LeaderElectionNamespace, "leader-election-namespace", "",
		"namespace of the leader election Lease (default: the namespace the pod runs in)")
	f.zap = zap.Options{Development: true}
	f.zap.BindFlags(fs)
	return f
}

// SetupLogging installs the logger the -zap-* flags describe as mcr's and controller-runtime's
// logger.
func (f *Flags) SetupLogging() {
	mcr.SetLogger(zap.New(zap.UseFlagOptions(&f.zap)))
}

// HostConfig loads the host cluster's rest.Config from -kubeconfig, or the way kubectl and
// controller-runtime find it when the flag is empty.
func (f *Flags) HostConfig() (*rest.Config, error) {
	if f.Kubeconfig == "" {
		cfg, err := mcr.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("loading the host cluster's config: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", f.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading the host cluster's config from %s: %w", f.Kubeconfig, err)
	}
	return cfg, nil
}

// ManagerOptions returns manager options from the flags.
func (f *Flags) ManagerOptions() mcr.Options {
	return mcr.Options{
		Metrics:                 metricsserver.Options{BindAddress: f.MetricsAddr},
		HealthProbeBindAddress:  f.ProbeAddr,
		LeaderElection:          f.LeaderElect,
		LeaderElectionID:        f.LeaderElectionID,
		LeaderElectionNamespace: f.LeaderElectionNamespace,
	}
}

// AddHealthChecks adds the liveness and readiness checks a deployment probes, and the fleet
// debug page on the metrics server.
func AddHealthChecks(mgr mcr.Manager) error {
	return errors.Join(
		mgr.AddHealthzCheck("healthz", healthz.Ping),
		mgr.AddReadyzCheck("readyz", healthz.Ping),
		// Ready once the provider has listed its members and the controllers have synced
		// every engaged cluster: a new replica of a rolling update waits for its fleet.
		mgr.AddReadyzCheck("fleet", mcmanager.FleetReadyCheck(mgr, mcmanager.ReadyCheckOptions{})),
		// What on-call reads first: curl <metrics address>/debug/fleet (docs/operations.md).
		mcmanager.AddFleetDebugHandler(mgr, mcmanager.DefaultFleetDebugPath),
	)
}

// SplitList splits a comma-separated flag value, such as -namespaces, dropping empty entries.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
