//go:build darwin || freebsd || openbsd || netbsd || dragonfly

package watch

// scanOnly: kqueue holds a descriptor for every entry of a watched folder
// (PLATFORM.md §6), so these systems find changes by folder scans alone.
const scanOnly = true
