//go:build darwin || freebsd || openbsd || netbsd || dragonfly

package watch

import "github.com/fsnotify/fsnotify"

// notifyWatcher: the Mac and BSD sources have no inotify watcher.
func notifyWatcher(folderSource) *fsnotify.Watcher { return nil }
