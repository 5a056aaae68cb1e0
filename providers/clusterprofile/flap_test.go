package clusterprofile_test

import (
	"io"
	"net"
	"sync"
	"testing"
)

// flapper forwards TCP connections to a member's apiserver while up, and refuses them (nothing
// listens) while down, so that a test can make a member unreachable and reachable again
// without changing anything on the hub. TLS passes through: the member's certificate is for
// 127.0.0.1, where the flapper listens too.
type flapper struct {
	t      *testing.T
	addr   string // host:port the flapper listens on
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

// newFlapper starts a flapper, up, in front of the member at target (host:port).
func newFlapper(t *testing.T, target string) *flapper {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &flapper{t: t, addr: ln.Addr().String(), target: target}
	f.serve(ln)
	t.Cleanup(f.down)
	return f
}

// URL is the https URL of the flapper.
func (f *flapper) URL() string { return "https://" + f.addr }

func (f *flapper) serve(ln net.Listener) {
	f.mu.Lock()
	f.ln = ln
	f.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.forward(c)
		}
	}()
}

func (f *flapper) forward(c net.Conn) {
	up, err := net.Dial("tcp", f.target)
	if err != nil {
		_ = c.Close()
		return
	}
	f.mu.Lock()
	f.conns = append(f.conns, c, up)
	f.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
}

// down stops listening and closes every forwarded connection.
func (f *flapper) down() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ln != nil {
		_ = f.ln.Close()
		f.ln = nil
	}
	for _, c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
}

// up listens again on the same address.
func (f *flapper) up() {
	f.t.Helper()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		f.t.Fatalf("listening again on %s: %v", f.addr, err)
	}
	f.serve(ln)
}
