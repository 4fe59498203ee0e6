package inject

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// hostile are continuation texts that must arrive byte for byte and never
// be read as commands or options.
var hostile = []string{
	`"; do shell script "id`,
	"a\\b \"q\" 'x' $(id) `id` ; end;",
	"line one\nline two\r\ttab \x1b[31m red",
	"-t %0 --no-paste Enter",
}

// parseAppleString reads back an expression appleString writes: quoted
// literals with \\ and \" escapes and (character id N), joined by " & ",
// optionally in parentheses. It fails on anything else, so a literal that
// could end early or run a statement does not parse.
func parseAppleString(expr string) (string, error) {
	if strings.HasPrefix(expr, "(") && strings.HasSuffix(expr, ")") && !strings.HasPrefix(expr, "(character id ") {
		expr = expr[1 : len(expr)-1]
	}
	var out strings.Builder
	for i := 0; ; {
		switch {
		case strings.HasPrefix(expr[i:], `"`):
			i++
			for {
				if i >= len(expr) {
					return "", fmt.Errorf("unterminated literal in %q", expr)
				}
				c := expr[i]
				if c == '"' {
					i++
					break
				}
				if c == '\\' {
					if i+1 >= len(expr) || (expr[i+1] != '\\' && expr[i+1] != '"') {
						return "", fmt.Errorf("bad escape at %d in %q", i, expr)
					}
					i++
					c = expr[i]
				} else if c < 0x20 || c == 0x7f {
					return "", fmt.Errorf("raw control character at %d in %q", i, expr)
				}
				out.WriteByte(c)
				i++
			}
		case strings.HasPrefix(expr[i:], "(character id "):
			end := strings.IndexByte(expr[i:], ')')
			n, err := strconv.Atoi(expr[i+len("(character id ") : i+end])
			if err != nil {
				return "", fmt.Errorf("bad character id in %q", expr)
			}
			out.WriteRune(rune(n))
			i += end + 1
		default:
			return "", fmt.Errorf("unexpected %q at %d", expr[i:], i)
		}
		if i == len(expr) {
			return out.String(), nil
		}
		if !strings.HasPrefix(expr[i:], " & ") {
			return "", fmt.Errorf("unexpected %q at %d", expr[i:], i)
		}
		i += 3
	}
}

func TestAppleString(t *testing.T) {
	for in, want := range map[string]string{
		"continue":                   `"continue"`,
		`"; do shell script "id`:     `"\"; do shell script \"id"`,
		`back\slash \" end\`:         `"back\\slash \\\" end\\"`,
		"one\ntwo":                   `("one" & (character id 10) & "two")`,
		"\x1b[31m\r":                 `((character id 27) & "[31m" & (character id 13))`,
		"":                           `""`,
		"tab\there & \"x\" & (more)": `("tab" & (character id 9) & "here & \"x\" & (more)")`,
	} {
		if got := appleString(in); got != want {
			t.Errorf("appleString(%q) = %s, want %s", in, got, want)
		}
	}
	for _, in := range append(hostile, "", "ü → ✓", "\x00\x01\x7f", `\`, `"`, "(character id 9)", "end tell\"\ndo shell script \"rm -rf ~\"") {
		back, err := parseAppleString(appleString(in))
		if err != nil || back != in {
			t.Errorf("appleString(%q) = %s reads back as %q, %v", in, appleString(in), back, err)
		}
	}
}
