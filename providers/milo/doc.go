// Package milo is a cluster provider that engages the control plane of every ready project of
// Milo (go.miloapis.com/milo) as a cluster, and keeps the fleet in step while projects are
// provisioned, become unready and are deleted.
//
// Every Milo project has a Kubernetes-style control plane of its own. The provider watches the
// objects Milo keeps for projects and engages one cluster per ready project, so a multi-cluster
// controller reconciles inside every project's control plane.
//
// # What it watches
//
// One cluster-scoped type on the host, after Options.Mode:
//
//   - ModeProject (the default): resourcemanager.miloapis.com/v1alpha1 Projects on the Milo
//     apiserver. A project's control plane is reached through the Milo apiserver itself, at
//     <base>/apis/resourcemanager.miloapis.com/v1alpha1/projects/<project>/control-plane, where
//     base is the URL of Options.BaseConfig (by default the host config). For operators outside
//     Milo's infrastructure cluster.
//   - ModeProjectControlPlane: infrastructure.miloapis.com/v1alpha1 ProjectControlPlanes on the
//     infrastructure cluster that runs the projects' control planes. A project's control plane
//     is reached at its in-cluster Service, https://milo-apiserver.project-<project>.svc.cluster.local:6443.
//     For operators inside the infrastructure cluster.
//
// Options.ControlPlaneHost replaces either address (a gateway, another Service layout, tests).
// Options.Selector narrows the watched objects by label. The provider runs its own informer
// from Start (New), or uses a cache the caller runs (NewForHost); no SetupWithManager is needed.
//
// Milo publishes no Go module, so the two types are defined in the api/ packages of this module,
// with only the fields the provider reads.
//
// # Cluster names
//
// A project is engaged under its name, the name of its Project and of its ProjectControlPlane
// (ClusterName). Both are cluster-scoped, so names are unique and stable across restarts, and
// they are what Milo's webhooks and controllers know a project by (Milo's own provider used
// "/<name>" until February 2026).
//
// # Readiness
//
// A selected project is engaged once Options.IsReady says it is ready: by default its Ready
// condition is True (ModeProject) or its ControlPlaneReady condition is True
// (ModeProjectControlPlane). An engaged project that stops being ready keeps its cluster for
// Options.UnreadyGracePeriod (30s by default): ready again within it, nothing happens; still
// unready at its end, it is disengaged, and engaged again, with a new cluster, once it is ready.
// A project whose object is deleted, or that stops being selected, is disengaged at once. A
// deletionTimestamp alone changes nothing, because Milo cleans up a deleted project's resources
// through its control plane while the object still exists; Milo reports that cleanup through the
// Ready condition.
//
// # Credentials
//
// A project's rest.Config is a copy of Options.BaseConfig with only the Host replaced: the
// provider presents its own host credentials to every project's control plane, as Milo's own
// provider and controller manager do, so that identity needs access to every project it serves.
// There are no per-project credentials to load, validate or rotate; credentials the base config
// refreshes itself (token files, exec plugins the operator configured) keep being refreshed by
// client-go. Credentials are never logged.
//
// # Failures
//
// A ready project that cannot be engaged (control plane unreachable, credentials refused, config
// refused, engagement refused) gets a Warning Event on its object, an error log line with the key
// "cluster", and counts in mcr_milo_provider_errors_total and mcr_milo_provider_broken_projects.
// Failures are retried with backoff. Every project is handled on its own, so one broken or
// unreachable project never delays the others.
//
// See README.md for the RBAC the provider needs on the host, the options and a quickstart.
package milo
