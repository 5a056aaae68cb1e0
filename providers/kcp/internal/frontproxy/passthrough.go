// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kcp-dev/logicalcluster/v3"
)

// passthrough forwards a request to backend b. For a resource request of logical cluster
// cluster (empty for discovery and the like) it also makes the objects belong to cluster: JSON
// creates are annotated with it when it is not b's home cluster, JSON objects in responses get
// the annotation, and a GET of another cluster's object is 404.
func (s *Server) passthrough(w http.ResponseWriter, r *http.Request, b *backend, req apiRequest, cluster string) {
	rewrite := cluster != "" && req.isResource
	if rewrite && r.Method == http.MethodPost && cluster != b.name {
		if err := annotateBody(r, cluster); err != nil {
			writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
			return
		}
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			u := *b.host
			u.Path = strings.TrimSuffix(u.Path, "/") + req.path
			u.RawPath = ""
			u.RawQuery = r.URL.RawQuery
			pr.Out.URL = &u
			pr.Out.Host = ""
			// The shard talks to its backends with its own credentials.
			pr.Out.Header.Del("Authorization")
			if rewrite {
				pr.Out.Header.Set("Accept", jsonAccept(r.Header.Get("Accept")))
			}
		},
		Transport:     b.transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeStatus(w, http.StatusBadGateway, metav1.StatusReasonServiceUnavailable, fmt.Sprintf("backend %s: %v", b.name, err))
		},
	}
	if rewrite {
		proxy.ModifyResponse = func(resp *http.Response) error {
			return belongTo(resp, r.Method, b, cluster, req)
		}
	}
	proxy.ServeHTTP(w, r)
}

func isJSON(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/json"
}

// protobufDecoder decodes the protobuf bodies clients send for built-in types (controller-runtime
// and client-go clients do by default).
var protobufDecoder = serializer.NewCodecFactory(clientgoscheme.Scheme).UniversalDeserializer()

// annotateBody annotates the object in the body of r with the logical cluster. A protobuf body
// of a built-in type is sent on as JSON; other bodies that are not JSON are left alone.
func annotateBody(r *http.Request, cluster string) error {
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return fmt.Errorf("reading the request body: %w", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	contentType := r.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(contentType)
	switch mediaType {
	case "application/json":
	case runtime.ContentTypeProtobuf:
		typed, gvk, err := protobufDecoder.Decode(body, nil, nil)
		if err != nil {
			return nil //nolint:nilerr // not a type the shard knows: forwarded unchanged
		}
		typed.GetObjectKind().SetGroupVersionKind(*gvk)
		if body, err = json.Marshal(typed); err != nil {
			return fmt.Errorf("encoding the request body as JSON: %w", err)
		}
		r.Header.Set("Content-Type", "application/json")
	default:
		return nil
	}
	var obj map[string]any
	if err := decodeJSON(body, &obj); err != nil {
		return fmt.Errorf("decoding the request body: %w", err)
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[logicalcluster.AnnotationKey] = cluster
	body, err = json.Marshal(obj)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	return nil
}

// belongTo rewrites a successful JSON object response of a backend so that it shows the object
// as one of the logical cluster's.
func belongTo(resp *http.Response, method string, b *backend, cluster string, req apiRequest) error {
	if resp.StatusCode < 200 || resp.StatusCode > 299 || !isJSON(resp.Header.Get("Content-Type")) {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	var obj map[string]any
	if decodeJSON(body, &obj) == nil && isObject(obj) {
		if !admit(obj, b, cluster) {
			if method == http.MethodGet {
				return notFound(resp, req)
			}
		} else if rewritten, err := json.Marshal(obj); err == nil {
			body = rewritten
		}
	}
	setBody(resp, body)
	return nil
}

// isObject tells an object of a resource from a Status or a list.
func isObject(obj map[string]any) bool {
	kind, _ := obj["kind"].(string)
	_, hasMeta := obj["metadata"].(map[string]any)
	return hasMeta && kind != "" && kind != "Status" && !strings.HasSuffix(kind, "List")
}

func notFound(resp *http.Response, req apiRequest) error {
	st := metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     http.StatusNotFound,
		Reason:   metav1.StatusReasonNotFound,
		Message:  fmt.Sprintf("%s %q not found", req.groupResource(), req.name),
		Details:  &metav1.StatusDetails{Name: req.name, Group: req.group, Kind: req.resource},
	}
	body, err := json.Marshal(st)
	if err != nil {
		return err
	}
	resp.StatusCode = http.StatusNotFound
	resp.Status = "404 Not Found"
	resp.Header.Set("Content-Type", "application/json")
	setBody(resp, body)
	return nil
}

func setBody(resp *http.Response, body []byte) {
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("Content-Encoding")
}
