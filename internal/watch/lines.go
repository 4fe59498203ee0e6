package watch

import (
	"bufio"
	"errors"
	"io"
)

// lineSplitter cuts a growing file into complete lines. A line is handed out
// only once its newline is written; a line longer than max is skipped while it
// is read, never held whole.
type lineSplitter struct {
	max      int
	start    int64  // where the unfinished line starts
	pos      int64  // the next byte to read
	pending  []byte // the unfinished line read so far, unless skipping
	skipping bool   // the unfinished line is over max: drop it up to its newline
	// onSkip is told of each skipped line: where it starts and where the next begins.
	onSkip func(start, end int64)
}

// reset starts over at offset at, a line start.
func (s *lineSplitter) reset(at int64) {
	s.start, s.pos, s.pending, s.skipping = at, at, nil, false
}

// rewind forgets the unfinished line read so far, so that it is read again
// from its start; a line being skipped stays skipped.
func (s *lineSplitter) rewind() {
	if !s.skipping {
		s.pos, s.pending = s.start, nil
	}
}

// next reads r, which must deliver the file from s.pos on, up to the end of
// the next complete line. It returns the line (newline stripped; a copy in
// into when it was read in one piece, else a fresh slice), where it starts
// and where the next line starts; ok is false once r has no complete line
// left.
func (s *lineSplitter) next(r *bufio.Reader, into *lineArena) (line []byte, start, end int64, ok bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		s.pos += int64(len(chunk))
		complete := err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		switch {
		case s.skipping:
		case len(s.pending)+len(chunk) > s.max:
			s.skipping, s.pending = true, nil
		case complete && s.pending == nil:
			s.pending = into.copy(chunk)
		default:
			s.pending = append(s.pending, chunk...)
		}
		if complete {
			start, line = s.start, s.pending
			s.start, s.pending = s.pos, nil
			if s.skipping {
				s.skipping = false
				if s.onSkip != nil {
					s.onSkip(start, s.pos)
				}
				continue
			}
			if line == nil {
				line = []byte{}
			}
			return line, start, s.pos, true, nil
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil, 0, 0, false, nil
		default:
			return nil, 0, 0, false, err
		}
	}
}
