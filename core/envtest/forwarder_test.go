// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package envtest_test

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"mcr.dev/core/envtest"
)

// echo starts a TCP server that writes back each line it reads.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err = bufio.NewReader(c).ReadString('\n')
	return err
}

func TestForwarderGoesDownAndUp(t *testing.T) {
	f, err := envtest.StartForwarder(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	addr := f.URL()[len("https://"):]
	if err := roundTrip(addr); err != nil {
		t.Fatalf("up: %v", err)
	}

	// A connection open when the Forwarder goes down is closed.
	open, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	if _, err := open.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(open).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	f.Down()
	f.Down()
	_ = open.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil {
		t.Error("a forwarded connection stayed open while down")
	}
	if err := roundTrip(addr); err == nil {
		t.Error("down: a connection was forwarded")
	}

	if err := f.Up(); err != nil {
		t.Fatal(err)
	}
	if err := f.Up(); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(addr); err != nil {
		t.Fatalf("up again: %v", err)
	}
	f.Close()
	if err := f.Up(); err == nil {
		t.Error("Up after Close succeeded")
	}
}
