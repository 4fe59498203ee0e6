// Package jsonscan reads JSON without decoding it: whether bytes are one
// JSON value, the members of an object and the elements of an array.
// Every line of every session file goes through it, so its cost is what a
// busy agent costs per byte (docs/performance.md).
package jsonscan

import (
	"encoding/binary"
	"math/bits"
)

// Valid reports whether b is one JSON value, exactly as json.Valid does
// (the same grammar, the same nesting limit, bytes above 0x7f taken as they
// are), several times faster.
func Valid(b []byte) bool {
	var stack []byte // '{' or '[' for each open container
	i := skipSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxNesting {
				return false
			}
			close := byte('}')
			if c == '[' {
				close = ']'
			}
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == close {
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if i = skipKey(b, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			i = skipString(b, i)
		case c == '-' || c >= '0' && c <= '9':
			i = skipNumber(b, i)
		case c == 't':
			i = skipLiteral(b, i, "true")
		case c == 'f':
			i = skipLiteral(b, i, "false")
		case c == 'n':
			i = skipLiteral(b, i, "null")
		default:
			return false
		}
		if i < 0 {
			return false
		}
		// After a value: close containers, or go on to the next value.
		for {
			i = skipSpace(b, i)
			if len(stack) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[len(stack)-1]
			switch {
			case b[i] == ',':
				i = skipSpace(b, i+1)
				if top == '{' {
					if i = skipKey(b, i); i < 0 {
						return false
					}
				}
			case top == '{' && b[i] == '}' || top == '[' && b[i] == ']':
				stack = stack[:len(stack)-1]
				i++
				continue
			default:
				return false
			}
			break
		}
	}
}

// maxNesting is encoding/json's limit on nested containers.
const maxNesting = 10000

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipKey skips `"key" :` and the space after it; -1 when there is none.
func skipKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = skipString(b, i); i < 0 {
		return -1
	}
	if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipSpace(b, i+1)
}

// skipString skips the string starting at b[i] ('"'); -1 when it is not one.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		for i+8 <= len(b) {
			if m := special8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3 // the first byte that is not plain
				break
			}
			i += 8
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// Each byte of a uint64 set to 1, and to 0x80.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// special8 marks the bytes of x (8 bytes of a string, little-endian) that
// end a string, begin an escape or are control characters: zero when all
// are plain, as most of a string's bytes are, skipped 8 at a time.
// (x-ones*n)&^x&highs sets the high bit of the first byte of x below n
// (n <= 0x80), and maybe of later ones; a byte equal to c is a zero byte of
// x^(ones*c). The lowest bit set is thus the first such byte's.
func special8(x uint64) uint64 {
	quote, slash := x^(ones*'"'), x^(ones*'\\')
	return ((quote-ones)&^quote | (slash-ones)&^slash | (x-ones*0x20)&^x) & highs
}

// skipNumber skips the number starting at b[i]; -1 when it is not one.
func skipNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		i = skipDigits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return -1
		}
		i = skipDigits(b, i)
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func skipLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
