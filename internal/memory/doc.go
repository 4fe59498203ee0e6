// Package memory gives back memory the daemon holds but no longer uses:
// the pages of its program that the kernel mapped while it started or
// worked (Linux), and, while it is idle, the collector's timed runs, which
// would map them back (docs/performance.md §3).
package memory
