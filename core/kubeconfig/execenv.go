// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package kubeconfig

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// defaultExecEnv is the list DefaultExecEnv returns.
var defaultExecEnv = []string{"AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_REGION", "AWS_STS_REGIONAL_ENDPOINTS"}

// DefaultExecEnv returns the environment variables an exec plugin's env may always set when
// Policy.AllowExec is set: those that the kubeconfigs cloud CLIs generate set (aws eks
// update-kubeconfig, eksctl). Each only selects among configuration the controller's operator
// already holds (a profile, a region), which the plugin's arguments can do as well.
//
// Everything else needs Policy.AllowExecEnv. client-go starts the plugin with the controller's
// own environment plus exec.env, so a variable such as LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT
// or DYLD_INSERT_LIBRARIES loads code of the kubeconfig author's choice into the plugin; PATH
// chooses the programs the plugin runs; HOME, KUBECONFIG and the cloud CLIs' config-file
// variables choose the credentials it reads; HTTPS_PROXY and SSL_CERT_FILE redirect or trust
// the connections it makes to get a token; GODEBUG, NODE_OPTIONS, PYTHONPATH, BASH_ENV and
// their kind change how the plugin's runtime behaves. An allow-list keeps the ones not named
// here out as well.
func DefaultExecEnv() []string { return slices.Clone(defaultExecEnv) }

// envName is what an environment variable name looks like; other names are not quoted in
// errors.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// checkExecEnv appends an ErrExecEnv violation for each variable of env that policy does not
// accept. field names env, e.g. `user "u" field exec.env`. Values are never quoted; names only
// when they look like variable names.
func checkExecEnv(field string, env []clientcmdapi.ExecEnvVar, policy Policy, errs *[]error) {
	for i, v := range env {
		if execEnvAllowed(v.Name, policy.AllowExecEnv) {
			continue
		}
		where := fmt.Sprintf("%s[%d]", field, i)
		if envName.MatchString(v.Name) {
			where += fmt.Sprintf(" (%s)", v.Name)
		}
		*errs = append(*errs, &PolicyError{Kind: ErrExecEnv, Field: where, Allow: "AllowExecEnv"})
	}
}

// execEnvAllowed reports whether name is in DefaultExecEnv or matches an entry of allow, a
// comma-separated list of names, prefixes ending in "*", or "*".
func execEnvAllowed(name, allow string) bool {
	if slices.Contains(defaultExecEnv, name) {
		return true
	}
	for entry := range strings.SplitSeq(allow, ",") {
		entry = strings.TrimSpace(entry)
		if prefix, ok := strings.CutSuffix(entry, "*"); ok {
			if strings.HasPrefix(name, prefix) {
				return true
			}
		} else if entry != "" && entry == name {
			return true
		}
	}
	return false
}
