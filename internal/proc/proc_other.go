//go:build !linux && !darwin

package proc

import (
	"context"
	"errors"
	"net/netip"
)

// Elsewhere the process table is not read: every lookup is
// errors.ErrUnsupported, so nothing is ever matched to a process.

func List(context.Context) ([]Process, error)              { return nil, errors.ErrUnsupported }
func Get(int) (Process, error)                             { return Process{}, errors.ErrUnsupported }
func Args(int) ([]string, error)                           { return nil, errors.ErrUnsupported }
func Env(int) ([]string, error)                            { return nil, errors.ErrUnsupported }
func Cwd(context.Context, int) (string, error)             { return "", errors.ErrUnsupported }
func HoldsOpen(context.Context, int, string) (bool, error) { return false, errors.ErrUnsupported }
func Listening(int) ([]netip.AddrPort, error)              { return nil, errors.ErrUnsupported }
func OnTTY(Process, string) (bool, error)                  { return false, errors.ErrUnsupported }
func TTYPath(Process) string                               { return "" }
func WatchExit(Process) (*Exit, error)                     { return nil, errors.ErrUnsupported }
func PeerUID(netip.AddrPort, netip.AddrPort) (int, error)  { return 0, errors.ErrUnsupported }
