package jsonscan

import "iter"

// Members yields the members of the object obj, in order: each key as
// written (its quotes stripped, escapes left as they are) and the bytes of
// its value. obj must be Valid; anything but an object yields nothing.
func Members(obj []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(key, value []byte) bool) {
		i := skipSpace(obj, 0)
		if i >= len(obj) || obj[i] != '{' {
			return
		}
		for i = skipSpace(obj, i+1); i < len(obj) && obj[i] == '"'; {
			end := skipString(obj, i)
			if end < 0 {
				return
			}
			key := obj[i+1 : end-1]
			from := skipSpace(obj, skipSpace(obj, end)+1) // past the colon
			to := skipValue(obj, from)
			if !yield(key, trimSpace(obj[from:to])) {
				return
			}
			i = skipSpace(obj, to)
			if i >= len(obj) || obj[i] != ',' {
				return
			}
			i = skipSpace(obj, i+1)
		}
	}
}

// Elements yields the elements of the array arr, in order: the bytes of
// each. arr must be Valid; anything but an array yields nothing.
func Elements(arr []byte) iter.Seq[[]byte] {
	return func(yield func(value []byte) bool) {
		i := skipSpace(arr, 0)
		if i >= len(arr) || arr[i] != '[' {
			return
		}
		for i = skipSpace(arr, i+1); i < len(arr) && arr[i] != ']'; {
			to := skipValue(arr, i)
			if !yield(trimSpace(arr[i:to])) {
				return
			}
			i = skipSpace(arr, to)
			if i >= len(arr) || arr[i] != ',' {
				return
			}
			i = skipSpace(arr, i+1)
		}
	}
}

// skipValue returns where the valid value that starts at b[i] ends, or,
// for a number or literal, the comma or bracket after it.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			if i = skipString(b, i); i < 0 {
				return len(b)
			}
			if depth == 0 {
				return i
			}
			i--
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\n' || b[j-1] == '\r') {
		j--
	}
	return b[i:j]
}
