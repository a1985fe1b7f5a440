//go:build tools

// Package tools pins the main packages of the real Kubernetes API server and of etcd, so that
// `go build` inside this module builds them at the versions go.mod requires (build.sh).
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
