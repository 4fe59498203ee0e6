//go:build darwin

package watch

import "github.com/fsnotify/fsnotify"

// notifyWatcher: the Mac sources have no inotify watcher.
func notifyWatcher(folderSource) *fsnotify.Watcher { return nil }
