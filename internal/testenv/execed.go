package testenv

import (
	"fmt"
	"os"
	"time"
)

// Execed waits (up to 10 s) until the process pid, just started, shows its
// command line and environment: exec.Cmd.Start returns once exec began, and
// the kernel lays them out a moment later (until then /proc shows them
// empty, and the process looks like no agent at all). Without /proc it
// returns at once.
func Execed(pid int) {
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		args, err1 := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		env, err2 := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err1 != nil || err2 != nil || len(args) > 0 && len(env) > 0 {
			return
		}
	}
}
