package kind

import (
	"fmt"

	"k8s.io/client-go/rest"

	"mcr.dev/core/kubeconfig"
)

// credentials is what one read of a kind cluster's kubeconfig gave.
type credentials struct {
	// hash identifies the kubeconfig's content. kind writes a new CA and new admin credentials
	// for every cluster it creates, so a cluster deleted and created again under the same name
	// has a different hash, and one that was merely listed again has the same.
	hash   string
	config *rest.Config
}

// load turns a kubeconfig kind generated into a rest.Config: through the shared loader of
// mcr.dev/core/kubeconfig with Options.Policy, then Options.RESTOptions.
//
// kind writes inline credentials only (certificate-authority-data, client-certificate-data,
// client-key-data), so the hardened default policy accepts every kubeconfig kind generates. The
// check still matters: the bytes come out of a container, and whatever can write the node's
// admin.conf must not make the controller run a program or read a local file.
func (p *Provider) load(data []byte) (*credentials, error) {
	parsed, err := kubeconfig.Parse(data)
	if err != nil {
		return nil, err
	}
	cfg, err := kubeconfig.RESTConfig(parsed, "", p.opts.Policy)
	if err != nil {
		return nil, err
	}
	for i, fn := range p.opts.RESTOptions {
		if err := fn(cfg); err != nil {
			return nil, fmt.Errorf("RESTOptions[%d]: %w", i, err)
		}
	}
	return &credentials{hash: kubeconfig.Hash(data), config: cfg}, nil
}
