//go:build !linux

package envtest

import (
	"errors"
	"syscall"
)

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func memoryStatus(int) (rss, peak int64, err error) {
	return 0, 0, errors.New("memory status is only read on Linux")
}
