// Package memory gives back memory the daemon holds but no longer uses:
// here, the pages of its own program file that the kernel mapped while it
// started or worked (docs/performance.md §3).
package memory
