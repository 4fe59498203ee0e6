//go:build !(darwin || freebsd || openbsd || netbsd || dragonfly)

package watch

import "github.com/fsnotify/fsnotify"

// notifyWatcher is the inotify watcher of a folder-level source.
func notifyWatcher(s folderSource) *fsnotify.Watcher { return s.(*notifySource).fsw }
