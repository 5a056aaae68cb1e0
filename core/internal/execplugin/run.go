// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package execplugin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientauthentication "k8s.io/client-go/pkg/apis/clientauthentication"
	"k8s.io/client-go/pkg/apis/clientauthentication/install"
)

// execInfoEnv is the variable that carries the ExecCredential to the plugin.
const execInfoEnv = "KUBERNETES_EXEC_INFO"

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)

	// apiVersions are the ExecCredential versions a plugin may ask for.
	apiVersions = map[string]schema.GroupVersion{
		"client.authentication.k8s.io/v1":      {Group: "client.authentication.k8s.io", Version: "v1"},
		"client.authentication.k8s.io/v1beta1": {Group: "client.authentication.k8s.io", Version: "v1beta1"},
	}

	// lookPath is exec.LookPath, replaced in tests.
	lookPath = exec.LookPath
)

func init() { install.Install(scheme) }

// run runs the plugin once within ctx and decodes its answer.
func (s *Source) run(ctx context.Context) (*Credential, error) {
	gv := apiVersions[s.exec.APIVersion]
	info, err := runtime.Encode(codecs.LegacyCodec(gv), &clientauthentication.ExecCredential{
		Spec: clientauthentication.ExecCredentialSpec{Cluster: s.cluster, Interactive: false},
	})
	if err != nil {
		return nil, s.errorf(ErrFailed, "cannot be given its input: %v", err)
	}
	out, err := s.exec1(ctx, info)
	if err != nil {
		return nil, err
	}
	return s.decode(gv, out)
}

// exec1 starts the plugin in a process group of its own, reads at most MaxOutput bytes of its
// stdout and kills the group once the output is complete, too large or no longer wanted, so
// that no process it started survives the call.
func (s *Source) exec1(ctx context.Context, info []byte) ([]byte, error) {
	cmd := exec.Command(s.exec.Command, s.exec.Args...)
	env := os.Environ()
	for _, v := range s.exec.Env {
		env = append(env, v.Name+"="+v.Value)
	}
	env = append(env, execInfoEnv+"="+string(info))
	cmd.Env = env
	// Stdin and stderr are /dev/null: a controller has no terminal, and stderr may hold
	// secrets that nothing may report.
	setProcessGroup(cmd)

	// A pipe of our own rather than cmd.StdoutPipe: Wait must not wait for, nor close, what
	// the group's other processes may still hold.
	r, w, err := os.Pipe()
	if err != nil {
		return nil, s.errorf(ErrFailed, "cannot be started: %v", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		return nil, s.errorf(ErrFailed, "cannot be started: %v", startError(err))
	}
	exited := waitExit(cmd.Process.Pid)

	type result struct {
		out []byte
		err error
	}
	read := make(chan result, 1)
	go func() {
		out, err := io.ReadAll(io.LimitReader(r, s.opts.MaxOutput+1))
		read <- result{out, err}
	}()

	var failure error
	var res result
	gotOutput := false
	select {
	case res = <-read:
		gotOutput = true
		switch {
		case int64(len(res.out)) > s.opts.MaxOutput:
			failure = s.errorf(ErrOutputTooLarge, "wrote more than %s to stdout", size(s.opts.MaxOutput))
		case res.err != nil:
			failure = s.errorf(ErrFailed, "could not be read: %v", res.err)
		default:
			// The output is complete; let the plugin exit on its own, within the call's time.
			select {
			case <-exited:
			case <-ctx.Done():
			}
		}
	case <-ctx.Done():
	}
	if failure == nil && ctx.Err() != nil {
		failure = s.ctxError(ctx)
	}
	// The plugin's leader is not reaped yet, so its process group id cannot have been reused.
	killGroup(cmd)
	_ = r.Close()
	if !gotOutput {
		<-read
	}
	waitErr := cmd.Wait()
	<-exited
	if failure != nil {
		return nil, failure
	}
	if waitErr != nil {
		var exitErr *exec.ExitError
		if errors.As(waitErr, &exitErr) {
			return nil, s.errorf(ErrFailed, "%s", exitStatus(exitErr))
		}
		return nil, s.errorf(ErrFailed, "failed: %v", waitErr)
	}
	return res.out, nil
}

// ctxError says why the call's context ended: the Source closed, or the time ran out.
func (s *Source) ctxError(ctx context.Context) error {
	if s.ctx.Err() != nil {
		return s.errorf(ErrClosed, "was stopped: the member was disengaged or the provider stopped")
	}
	return s.errorf(ErrTimeout, "did not answer within %s", s.opts.Timeout)
}

// startError keeps what says why the plugin could not start (not found, not executable).
func startError(err error) error {
	var execErr *exec.Error
	if errors.As(err, &execErr) {
		return execErr.Err
	}
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err
	}
	return err
}

// decode turns the plugin's output into a Credential. Errors never quote the output.
func (s *Source) decode(gv schema.GroupVersion, out []byte) (*Credential, error) {
	cred := &clientauthentication.ExecCredential{}
	_, gvk, err := codecs.UniversalDecoder(gv).Decode(out, nil, cred)
	if err != nil {
		return nil, s.errorf(ErrFailed, "answered with something that is no ExecCredential")
	}
	if gvk.Group != gv.Group || gvk.Version != gv.Version {
		return nil, s.errorf(ErrFailed, "answered with another apiVersion than the %s it is configured with", gv)
	}
	st := cred.Status
	switch {
	case st == nil:
		return nil, s.errorf(ErrFailed, "answered without a status")
	case st.Token == "" && st.ClientCertificateData == "" && st.ClientKeyData == "":
		return nil, s.errorf(ErrFailed, "answered with neither a token nor a certificate and key")
	case (st.ClientCertificateData == "") != (st.ClientKeyData == ""):
		return nil, s.errorf(ErrFailed, "answered with a certificate or a key, not both")
	}
	c := &Credential{Token: st.Token}
	if st.ExpirationTimestamp != nil {
		c.Expiry = st.ExpirationTimestamp.Time
	}
	if st.ClientCertificateData != "" {
		cert, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData))
		if err != nil {
			return nil, s.errorf(ErrFailed, "answered with a certificate and key that do not form a pair")
		}
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, s.errorf(ErrFailed, "answered with a certificate that cannot be parsed")
		}
		c.Cert = &cert
	}
	return c, nil
}

// size writes n bytes the way the documentation states the limits.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
