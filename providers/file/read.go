// Copyright 2026 The mcr Authors.
// SPDX-License-Identifier: Apache-2.0

package file

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// The provider reads every file the same way, kubeconfigs (configured or discovered) and the
// files they reference alike: a file must be a regular file (or a symlink to one) of at most
// Options.MaxFileSize bytes. Anything else is an error on that file, or on the context that
// references it, and never stops the scan: a named pipe (FIFO) would block a plain open or read
// until someone writes to it, a device such as /dev/zero never ends, and the scan runs on the
// provider's only file goroutine, which every reload and the shutdown wait for.

// Problems with a file's type and size; every error of readFile about them wraps one.
var (
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = errors.New("file too large")
)

// readFile reads the regular file at path, following symlinks, and fails on anything else or
// when it holds more than limit bytes. It never blocks on a special file: it looks at the file
// before opening it, and opens it non-blocking and looks again at what it opened, so that a file
// replaced by a pipe in between is refused too.
func readFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkFile(fi, limit); err != nil {
		return nil, err
	}
	// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
	// O_NOCTTY: a terminal device does not become the process's controlling terminal.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkFile(fi, limit); err != nil {
		return nil, err
	}
	// The file may grow after Stat: read one byte more than the limit to notice.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(limit)
	}
	return data, nil
}

// checkFile reports why a file is not one the provider reads, or nil.
func checkFile(fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return notRegular(fi.Mode())
	}
	if fi.Size() > limit {
		return tooLarge(limit)
	}
	return nil
}

func notRegular(m fs.FileMode) error {
	return fmt.Errorf("%w: %s", errNotRegular, fileType(m))
}

func tooLarge(limit int64) error {
	return fmt.Errorf("%w: more than %d bytes (Options.MaxFileSize)", errTooLarge, limit)
}

// fileType names the type of a file that is not regular, for error messages.
func fileType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	}
	return "an irregular file"
}
