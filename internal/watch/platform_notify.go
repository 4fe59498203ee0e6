//go:build !(darwin || freebsd || openbsd || netbsd || dragonfly)

package watch

// scanOnly: folder watches (inotify on Linux) wake the watcher; scans are the
// backstop.
const scanOnly = false
