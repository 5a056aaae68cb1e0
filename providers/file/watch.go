package file

import (
	"errors"
	"fmt"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/go-logr/logr"
)

// watcher watches directories, never files: editors replace files by renaming a new one over
// them, and ConfigMap and Secret volumes swap a ..data symlink, and both are seen only as events
// in the directory. Any event means "scan again"; the scan works out what changed.
type watcher struct {
	fs      *fsnotify.Watcher
	log     logr.Logger
	watched map[string]struct{}
	events  chan struct{}
	done    chan struct{}
}

func newWatcher(log logr.Logger) (*watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching the file system: %w", err)
	}
	w := &watcher{
		fs:      fsw,
		log:     log,
		watched: map[string]struct{}{},
		events:  make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	go w.forward()
	return w, nil
}

// forward turns fsnotify's events and errors into scan requests.
func (w *watcher) forward() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			w.log.V(2).Info("File system event", "event", ev.String())
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflow lost events: scanning again catches up.
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Error(err, "Watching kubeconfig files")
			}
		}
		select {
		case w.events <- struct{}{}:
		default:
		}
	}
}

// changed delivers a value after one or more file system events.
func (w *watcher) changed() <-chan struct{} { return w.events }

// update watches exactly dirs. It reports whether a directory was added.
func (w *watcher) update(dirs map[string]struct{}) bool {
	added := false
	for dir := range dirs {
		if _, ok := w.watched[dir]; ok {
			continue
		}
		if err := w.fs.Add(dir); err != nil {
			// Most likely the inotify watch limit, or a directory that vanished meanwhile;
			// the periodic resync still covers it.
			w.log.Error(err, "Cannot watch directory; changes in it are noticed at the next resync", "directory", dir)
			continue
		}
		w.watched[dir] = struct{}{}
		added = true
	}
	for dir := range w.watched {
		if _, ok := dirs[dir]; !ok {
			// Fails harmlessly when the directory is gone (its watch went with it).
			_ = w.fs.Remove(dir)
			delete(w.watched, dir)
		}
	}
	return added
}

func (w *watcher) close() {
	_ = w.fs.Close()
	<-w.done
}

// debouncer fires once the pokes have stopped for quiet, or maxWait after the first poke of a
// burst, whichever is earlier.
type debouncer struct {
	quiet, maxWait time.Duration
	timer          *time.Timer
	armed          bool
	first          time.Time
}

func newDebouncer(quiet time.Duration) *debouncer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &debouncer{quiet: quiet, maxWait: 10 * quiet, timer: t}
}

func (d *debouncer) poke() {
	now := time.Now()
	if !d.armed {
		d.armed = true
		d.first = now
	}
	wait := min(d.quiet, d.first.Add(d.maxWait).Sub(now))
	d.timer.Reset(max(wait, 0))
}

// fire delivers when the debouncer fires; the receiver then calls fired.
func (d *debouncer) fire() <-chan time.Time { return d.timer.C }

// fired disarms the debouncer, so that the next poke starts a new burst.
func (d *debouncer) fired() { d.armed = false }

func (d *debouncer) stop() { d.timer.Stop() }
