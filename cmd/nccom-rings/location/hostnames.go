package location

import (
	"errors"
	"fmt"
	"strings"
)

// IsHostlist reports whether s is written as a Slurm host list rather
// than one name: it holds a bracket group or a comma ("trn[001-016]",
// "a,b").
func IsHostlist(s string) bool { return strings.ContainsAny(s, "[],") }

// Hostnames expands the Slurm host list s ("trn[001-016,020]",
// "rack[1-2]n[01-02],login1") into its names in order, as `scontrol show
// hostnames` does (see hostlist.go for the grammar and the padding of
// numbers), refusing more than max names before a name is made. Each name
// must be a host name (1 to MaxHostName bytes of [A-Za-z0-9._:-]). An
// error is an *Error whose Col is the byte of s it is about (File and
// Line left for the caller).
func Hostnames(s string, max int) ([]string, error) {
	lim := hostlistLimits{names: uint64(max), nameLen: MaxHostName, bytes: MaxNameBytes}
	names, _, err := expandHostlist(s, lim)
	if err != nil {
		var he *hostlistError
		if errors.As(err, &he) {
			msg := "host list " + clip(s) + ": " + he.Msg
			if he.Kind == tooManyNames {
				msg = fmt.Sprintf("host list %s gives more than %d names (refused before it is expanded)", clip(s), max)
			}
			return nil, &Error{Col: he.Off + 1, Msg: msg}
		}
		return nil, &Error{Msg: err.Error()}
	}
	for _, n := range names {
		if err := CheckHost(n); err != nil {
			return nil, &Error{Col: 1, Msg: "host list " + clip(s) + ": " + err.Error()}
		}
	}
	return names, nil
}
