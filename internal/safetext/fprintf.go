package safetext

import (
	"fmt"
	"io"
	"reflect"
)

// Fprintf writes like fmt.Fprintf for a person's terminal: every string,
// error or Stringer among args is first made one safe Line, so that no
// text from an agent's records — an error text, a folder, an id — can
// steer the terminal. The format is the caller's own and passes as is.
func Fprintf(w io.Writer, format string, args ...any) {
	safe := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case error:
			safe[i] = Line(v.Error())
		case fmt.Stringer:
			safe[i] = Line(v.String())
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				safe[i] = Line(rv.String())
			} else {
				safe[i] = a
			}
		}
	}
	fmt.Fprintf(w, format, safe...)
}
