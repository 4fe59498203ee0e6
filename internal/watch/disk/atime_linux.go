package disk

import "syscall"

// noAtime opens a file without updating its access time: allowed on the
// owner's files, which an agent's are.
const noAtime = syscall.O_NOATIME
