// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
)

// Placeholder replaces what Text removes.
const Placeholder = "REDACTED"

// minSecretBytes is the length below which Text does not look for a known secret: a
// shorter value would match ordinary words of the text.
const minSecretBytes = 8

var (
	// authorization matches the credentials of an Authorization header as it is printed in a
	// request dump or a Go map: "Authorization: Bearer x", "Authorization":["Basic x"].
	authorization = regexp.MustCompile(`(?i)(authorization\W{0,4}(?:bearer|basic)\s+)[^\s"'\]]+`)
	// bearer matches a bearer token outside a header: "Bearer " and something long enough to
	// be a token rather than a word.
	bearer = regexp.MustCompile(`\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*`)
	// credentialParameter matches a query or form parameter whose name says it holds a
	// credential, outside any URL Text recognized: "&access_token=x".
	credentialParameter = regexp.MustCompile(`(?i)([?&;][\w.-]*(?:token|secret|password|passwd|key|signature|credential)[\w.-]*=)[^&;\s"'#]+`)
	// jwt matches a JSON Web Token (ServiceAccount and OIDC tokens are JWTs).
	jwt = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*`)
	// pluginOutput matches what client-go quotes of an exec plugin's output it cannot decode
	// ("decoding stdout: parsing time \"<value>\" ..."), up to the end of the line: the output is
	// a credential.
	pluginOutput = regexp.MustCompile(`(decoding stdout:)[^\n]*`)
	// privateKey matches a PEM private key block.
	privateKey = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)`)
)

// Text returns s without the credentials text about a member may carry: the user info,
// query and fragment of every URL (client-go, controller-runtime and net/http errors quote
// request URLs, as in Get "https://user:pass@host/api?token=..."), parameters named like
// credentials (&access_token=...), the credentials of Authorization headers, bearer tokens,
// JWTs, PEM private keys and what client-go quotes of an exec plugin's output it cannot decode
// (after "decoding stdout:"); and every occurrence of
// each of secrets (known credential values of the member, see Secrets) of at least 8 bytes.
// Each is replaced by Placeholder; the rest of the text, the host of a URL included, stays.
//
// It is the one redaction path of mcr.s providers: Error, Logger and everything the provider
// kit reports (mcr.dev/core/providers/kit) use it.
func Text(s string, secrets ...string) string {
	for _, secret := range secrets {
		if len(secret) >= minSecretBytes {
			s = strings.ReplaceAll(s, secret, Placeholder)
		}
	}
	s = redactURLs(s)
	s = credentialParameter.ReplaceAllString(s, "${1}"+Placeholder)
	s = privateKey.ReplaceAllString(s, Placeholder)
	s = pluginOutput.ReplaceAllString(s, "${1} "+Placeholder)
	s = authorization.ReplaceAllString(s, "${1}"+Placeholder)
	s = bearer.ReplaceAllString(s, "Bearer "+Placeholder)
	return jwt.ReplaceAllString(s, Placeholder)
}

// redactURLs replaces the user info, query and fragment of every URL of s ("scheme://...").
func redactURLs(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := i + len("://")
		end := urlEnd(s, start)
		b.WriteString(s[:start])
		b.WriteString(redactURL(s[start:end]))
		s = s[end:]
	}
}

// urlEnd returns the end of the URL whose authority starts at s[start]: the first space or
// control character, or, after the authority, the first quote or angle bracket that is not
// escaped by a backslash (URLs are often quoted with %q). net/url leaves quotes in a host as
// they are, so a quote in the authority does not end the URL: the worst that does is a longer
// stretch of text taken for the URL.
func urlEnd(s string, start int) int {
	authority := true
	for i := start; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c == 0x7f:
			return i
		case c == '\\' && i+1 < len(s):
			i++
		case c == '/' || c == '?' || c == '#':
			authority = false
		case !authority && (c == '"' || c == '\'' || c == '`' || c == '<' || c == '>'):
			return i
		}
	}
	return len(s)
}

// redactURL redacts one URL without its scheme: user info up to the last "@" before the query
// (a password may hold a "/", which url.Parse would take for a path), then query and fragment.
func redactURL(u string) string {
	rest := ""
	if q := strings.IndexAny(u, "?#"); q >= 0 {
		rest = u[q:q+1] + Placeholder
		u = u[:q]
	}
	if at := strings.LastIndex(u, "@"); at >= 0 {
		u = Placeholder + u[at:]
	}
	return u + rest
}

// Secrets returns the credential values of cfg that Text must remove wherever they
// appear: the bearer token, the basic-auth password, the client key, the user info and query
// of the host, the arguments and environment values of an exec plugin and the configuration
// values of an auth-provider. Nil for a nil cfg.
func Secrets(cfg *rest.Config) []string {
	if cfg == nil {
		return nil
	}
	secrets := []string{cfg.BearerToken, cfg.Password, string(cfg.KeyData)}
	if at := strings.LastIndex(cfg.Host, "@"); at >= 0 {
		userinfo := cfg.Host[:at]
		if i := strings.Index(userinfo, "://"); i >= 0 {
			userinfo = userinfo[i+len("://"):]
		}
		_, password, _ := strings.Cut(userinfo, ":")
		secrets = append(secrets, userinfo, password)
	}
	if _, query, ok := strings.Cut(cfg.Host, "?"); ok {
		secrets = append(secrets, query)
	}
	if e := cfg.ExecProvider; e != nil {
		secrets = append(secrets, e.Args...)
		for _, v := range e.Env {
			secrets = append(secrets, v.Value)
		}
	}
	if a := cfg.AuthProvider; a != nil {
		for _, v := range a.Config {
			secrets = append(secrets, v)
		}
	}
	return secrets
}

// Error returns err with its message passed through Text (with secrets), or nil for
// nil. errors.Is and errors.As still see err and what it wraps; their messages are not
// redacted, so print the returned error, not what it wraps.
func Error(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	if r, ok := err.(*redactedError); ok && len(secrets) == 0 {
		return r
	}
	msg := err.Error()
	redacted := Text(msg, secrets...)
	return &redactedError{msg: redacted, err: err}
}

// redactedError is an error whose message is redacted.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Logger returns a logger that passes the message, every string, error and
// fmt.Stringer value and every name of log through Text before log's sink sees them.
// The provider kit wraps every provider.s logger with it (kit.Options.SetDefaults), so every
// line a provider logs through its Options or its Engine is redacted. A logger without a sink is returned as it is.
func Logger(log logr.Logger) logr.Logger {
	sink := log.GetSink()
	if sink == nil {
		return log
	}
	if _, ok := sink.(*redactSink); ok {
		return log
	}
	// The sink is initialized already: tell it of the frame this sink adds.
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return log.WithSink(&redactSink{sink: sink})
}

// redactSink is the logr.LogSink of Logger.
type redactSink struct{ sink logr.LogSink }

var _ logr.CallDepthLogSink = (*redactSink)(nil)

func (s *redactSink) Init(info logr.RuntimeInfo) {
	// For logr.New(sink): one more frame, this sink's method between the logger and the
	// wrapped sink.
	info.CallDepth++
	s.sink.Init(info)
}

func (s *redactSink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s *redactSink) Info(level int, msg string, keysAndValues ...any) {
	s.sink.Info(level, Text(msg), redactValues(keysAndValues)...)
}

func (s *redactSink) Error(err error, msg string, keysAndValues ...any) {
	if err != nil {
		err, _ = redactValue(err).(error)
	}
	s.sink.Error(err, Text(msg), redactValues(keysAndValues)...)
}

func (s *redactSink) WithValues(keysAndValues ...any) logr.LogSink {
	return &redactSink{sink: s.sink.WithValues(redactValues(keysAndValues)...)}
}

func (s *redactSink) WithName(name string) logr.LogSink {
	return &redactSink{sink: s.sink.WithName(Text(name))}
}

func (s *redactSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
		return &redactSink{sink: cd.WithCallDepth(depth)}
	}
	return s
}

// redactValues returns the key-value pairs kv with the values redacted; keys are the
// program's own words.
func redactValues(kv []any) []any {
	out := make([]any, len(kv))
	for i, v := range kv {
		if i%2 == 0 {
			out[i] = v
			continue
		}
		out[i] = redactValue(v)
	}
	return out
}

// redactValue redacts a string, error or fmt.Stringer; a method that panics (a nil pointer)
// leaves v to the sink, which reports such panics itself.
func redactValue(v any) (out any) {
	defer func() {
		if recover() != nil {
			out = v
		}
	}()
	switch v := v.(type) {
	case string:
		return Text(v)
	case error:
		return Error(v)
	case fmt.Stringer:
		return Text(v.String())
	}
	return v
}
