package proc

// Exit is a watch on the end of one of the person's processes, without
// polling (Linux: a pidfd in the runtime's poller; macOS: kqueue
// EVFILT_PROC NOTE_EXIT).
type Exit struct {
	// Done is closed when the process has ended (or was gone already).
	Done <-chan struct{}
	stop func()
}

// Stop ends the watch; Done is then never closed by it.
func (e *Exit) Stop() { e.stop() }

// ended is an Exit whose process is gone already.
func ended() *Exit {
	done := make(chan struct{})
	close(done)
	return &Exit{Done: done, stop: func() {}}
}
