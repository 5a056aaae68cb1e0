// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package frontproxy

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// compositePrefix starts every composite resourceVersion, so that it can be told from the plain
// resourceVersions of objects.
const compositePrefix = "mcr-kcp."

// resourceVersions holds the resourceVersion reached on each backend of a merged list or watch,
// by backend name. Encoded, it is the resourceVersion the front-proxy hands out for a merge of
// several backends: a watch from it resumes every backend where it was.
type resourceVersions map[string]string

// encode returns the composite resourceVersion. encoding/json sorts map keys, so equal maps
// give equal strings.
func (v resourceVersions) encode() string {
	data, err := json.Marshal(map[string]string(v))
	if err != nil { // a map of strings always marshals
		panic(err)
	}
	return compositePrefix + base64.RawURLEncoding.EncodeToString(data)
}

// decodeResourceVersions decodes a composite resourceVersion; ok is false for anything else
// (a plain resourceVersion, "", "0", garbage).
func decodeResourceVersions(s string) (v resourceVersions, ok bool) {
	encoded, found := strings.CutPrefix(s, compositePrefix)
	if !found {
		return nil, false
	}
	data, err := base64.RawURLEncoding.DecodeString(encoded)
	if err != nil {
		return nil, false
	}
	if err := json.Unmarshal(data, &v); err != nil || v == nil {
		return nil, false
	}
	return v, true
}
