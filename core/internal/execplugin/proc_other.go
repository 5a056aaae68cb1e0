//go:build !linux

package execplugin

// waitExit returns a closed channel where a process cannot be waited for without reaping it:
// the plugin's group is killed as soon as its output is complete.
func waitExit(int) <-chan struct{} {
	done := make(chan struct{})
	close(done)
	return done
}
