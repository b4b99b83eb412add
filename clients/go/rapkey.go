package idgen

import (
	"errors"
	"strings"
)

// Rapkey is a readable key, `body-check` (docs/formats.md §3, §4): a type, one to five segments
// and Damm's check character over a quasigroup of order 37.
type Rapkey string

const rapkeyChecks = "0123456789abcdefghijklmnopqrstuvwxyz~"

// ErrInvalidRapkey is what every rapkey function's error wraps.
var ErrInvalidRapkey = errors.New("invalid rapkey")

func rapkeyValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c == '.':
		return 36
	}
	return -1
}

// damm runs x ∘ y = 2·(x − y) mod 37 from i over s's values.
func damm(i int, s string) int {
	for k := 0; k < len(s); k++ {
		i = ((2*(i-rapkeyValue(s[k])))%37 + 37) % 37
	}
	return i
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// validBody: type 2..8 letters, then 1..5 segments of 1..32 letters and digits; with
// prefix, 0..5 segments (a prefix of whole parts).
func validBody(body string, prefix bool) bool {
	parts := strings.Split(body, ".")
	if len(parts) > 6 || (!prefix && len(parts) < 2) {
		return false
	}
	t := parts[0]
	if len(t) < 2 || len(t) > 8 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if !isLower(t[i]) {
			return false
		}
	}
	for _, seg := range parts[1:] {
		if len(seg) < 1 || len(seg) > 32 {
			return false
		}
		for i := 0; i < len(seg); i++ {
			if !isLower(seg[i]) && !isDigit(seg[i]) {
				return false
			}
		}
	}
	return len(body)+2 <= 128
}

// RapkeyCheckChar is the check character of body.
func RapkeyCheckChar(body string) (byte, error) {
	if !validBody(body, false) {
		return 0, ErrInvalidRapkey
	}
	return rapkeyChecks[damm(0, body)], nil
}

// ParseRapkey checks a key as it is (no trimming or lowercasing): its grammar and its check.
func ParseRapkey(key string) (Rapkey, error) {
	if len(key) < 3 || key[len(key)-2] != '-' {
		return "", ErrInvalidRapkey
	}
	body, check := key[:len(key)-2], key[len(key)-1]
	if !validBody(body, false) {
		return "", ErrInvalidRapkey
	}
	// The chain over the body then the check's value ends at 0 exactly when the check is the
	// body's interim value (x ∘ y = 0 only when x = y).
	if v := strings.IndexByte(rapkeyChecks, check); v < 0 || damm(0, body) != v {
		return "", ErrInvalidRapkey
	}
	return Rapkey(key), nil
}

// BuildRapkey makes the key of a type and segments, each trimmed and lowercased first.
func BuildRapkey(typ string, segments ...string) (Rapkey, error) {
	parts := make([]string, 0, 1+len(segments))
	parts = append(parts, normal(typ))
	for _, s := range segments {
		parts = append(parts, normal(s))
	}
	body := strings.Join(parts, ".")
	c, err := RapkeyCheckChar(body)
	if err != nil {
		return "", err
	}
	return Rapkey(body + "-" + string(c)), nil
}

// Body is the key without its check character.
func (k Rapkey) Body() string { return string(k[:len(k)-2]) }

// RapkeyPrefixRange is [lo, hi): the keys under a prefix of whole parts (formats.md §3).
// The prefix is trimmed and lowercased first.
func RapkeyPrefixRange(prefix string) (lo, hi string, err error) {
	prefix = normal(prefix)
	if !validBody(prefix, true) {
		return "", "", ErrInvalidRapkey
	}
	return prefix + "-", prefix + "/", nil
}

// normal trims Unicode white space and lowercases ASCII letters only (a non-ASCII letter stays,
// and is then refused).
func normal(s string) string {
	s = strings.TrimSpace(s)
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// ToRapkey trims and lowercases a key, then checks it.
func ToRapkey(input string) (Rapkey, error) { return ParseRapkey(normal(input)) }
