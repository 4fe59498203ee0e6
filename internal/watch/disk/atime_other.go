//go:build !linux

package disk

// noAtime: no such flag here.
const noAtime = 0
