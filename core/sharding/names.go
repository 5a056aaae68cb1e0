// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package sharding

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"mcr.dev/core/multicluster"
)

// Labels and annotations on the Leases of a group.
const (
	// LabelGroup selects the Leases of one group; its value is the group name, or a hashed
	// form of it when the name is not a valid label value.
	LabelGroup = "sharding.mcr.dev/group"
	// LabelRole is RoleMember on membership Leases and RoleCluster on per-cluster Leases.
	LabelRole = "sharding.mcr.dev/role"
	// AnnotationIdentity holds a member's full identity (Lease names are shortened).
	AnnotationIdentity = "sharding.mcr.dev/identity"
	// AnnotationWeight holds a member's weight.
	AnnotationWeight = "sharding.mcr.dev/weight"
	// AnnotationCluster holds the full name of the cluster a per-cluster Lease fences.
	AnnotationCluster = "sharding.mcr.dev/cluster"

	RoleMember  = "member"
	RoleCluster = "cluster"
)

// nameHashLen is the number of hex digits of the hash that ends every Lease name: 40 bits, so
// that two names of a 10,000-cluster fleet collide with a probability below 1e-4. A collision
// is detected (the Lease names another cluster) and reported, never silently shared.
const nameHashLen = 10

// maxNamePart bounds the readable part of a Lease name so that the whole name is a DNS-1123
// label (at most 63 characters), valid for any object name.
const maxNamePart = 20

// MemberLeaseName is the name of the membership Lease of identity in group.
func MemberLeaseName(group, identity string) string {
	return leaseName(group, "m", identity)
}

// ClusterLeaseName is the name of the Lease that fences cluster in group. Names are DNS-1123
// labels whatever the cluster name (which may be empty, long, or contain '/', ':', '#', upper
// case, ...): a readable prefix followed by a hash of the exact group and cluster name.
func ClusterLeaseName(group string, cluster multicluster.ClusterName) string {
	return leaseName(group, "c", string(cluster))
}

func leaseName(group, kind, name string) string {
	sum := sha256.Sum256([]byte(group + "\x00" + kind + "\x00" + name))
	parts := []string{"mcr", sanitize(group, maxNamePart), kind, sanitize(name, maxNamePart), hex.EncodeToString(sum[:])[:nameHashLen]}
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteString(p)
	}
	return b.String()
}

// sanitize lowercases s, turns every run of characters other than [a-z0-9] into one '-', and
// trims it to at most limit characters without leading or trailing '-'.
func sanitize(s string, limit int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= limit {
				break
			}
			continue
		}
		dash = true
	}
	return strings.Trim(b.String(), "-")
}

// groupLabelValue is the value of LabelGroup for group.
func groupLabelValue(group string) string {
	if len(validation.IsValidLabelValue(group)) == 0 {
		return group
	}
	sum := sha256.Sum256([]byte(group))
	hash := hex.EncodeToString(sum[:])[:nameHashLen]
	if prefix := sanitize(group, 40); prefix != "" {
		return prefix + "-" + hash
	}
	return hash
}
