package report

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/nccomring/libnccomring/cmd/nccom-rings/score"
	"github.com/nccomring/libnccomring/ringdump"
)

// Redactor replaces host names, EC2 instance ids and location names by
// tokens: host-1, instance-1, loc-1, numbered in the order first met (a
// job's hosts and locations in node order), so that within one page the
// same name is always the same token and two names never share one.
type Redactor struct {
	tokens map[string]string
	counts map[string]int
	dir    string
}

// instanceID is an EC2 instance id (8 or 17 hex digits).
var instanceID = regexp.MustCompile(`^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$`)

// NewRedactor knows j's host names and location names (j may be nil).
func NewRedactor(j *score.Job) *Redactor {
	r := &Redactor{tokens: map[string]string{}, counts: map[string]int{}}
	r.Learn(j)
	return r
}

// Learn gives j's host names and location names their tokens (j may be
// nil): a page of two jobs learns both before it redacts either.
func (r *Redactor) Learn(j *score.Job) {
	if j == nil {
		return
	}
	for _, h := range j.Host {
		r.host(h)
	}
	for _, l := range j.Location {
		r.Location(l)
	}
}

func (r *Redactor) token(kind, name string) string {
	if t, ok := r.tokens[name]; ok {
		return t
	}
	r.counts[kind]++
	t := fmt.Sprintf("%s-%d", kind, r.counts[kind])
	r.tokens[name] = t
	return t
}

// host is h's token, learning the forms a dump writes it in: whole, in a
// file name (ringdump.FileName's), and up to its first dot.
func (r *Redactor) host(h string) string {
	if h == "" {
		return ""
	}
	kind := "host"
	if instanceID.MatchString(h) {
		kind = "instance"
	}
	t := r.token(kind, h)
	if _, safe, _, ok := ringdump.ParseFileName(ringdump.FileName(0, h, 0)); ok && safe != h {
		r.tokens[safe] = t
	}
	if short, _, ok := strings.Cut(h, "."); ok && short != "" {
		if _, known := r.tokens[short]; !known {
			r.tokens[short] = t
		}
	}
	return t
}

// Host is host name h's token.
func (r *Redactor) Host(h string) string { return r.host(h) }

// Location is l with each of its names replaced by a token.
func (r *Redactor) Location(l string) string {
	if l == "" {
		return ""
	}
	names := strings.Split(l, "/")
	for i, n := range names {
		names[i] = r.token("loc", n)
	}
	return strings.Join(names, "/")
}

// Text is free text (a WARN, a finding, a path) with every known name, and
// every instance id, replaced: names are matched as whole words of the
// characters host and location names are made of, and a dump's file name
// by its host part. The dump directory reads DIR.
func (r *Redactor) Text(s string) string {
	if r.dir != "" {
		s = strings.ReplaceAll(s, r.dir, "DIR")
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexFunc(s, isNameByte)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		n := strings.IndexFunc(s, func(c rune) bool { return !isNameByte(c) })
		if n < 0 {
			n = len(s)
		}
		b.WriteString(r.word(s[:n]))
		s = s[n:]
	}
	return b.String()
}

func isNameByte(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-'
}

// word is w redacted: a known name, an instance id, a dump's file name,
// or w itself. A sentence's final dot is not part of the name.
func (r *Redactor) word(w string) string {
	if t, ok := r.tokens[w]; ok {
		return t
	}
	if instanceID.MatchString(w) {
		return r.token("instance", w)
	}
	if rank, host, pid, ok := ringdump.ParseFileName(w); ok {
		return ringdump.FileName(rank, r.host(host), pid)
	}
	if trimmed := strings.TrimRight(w, ".:"); trimmed != w && trimmed != "" {
		return r.word(trimmed) + w[len(trimmed):]
	}
	return w
}

// Input is in redacted: a copy of its job with tokens for hosts and
// locations, and its texts through Text. in is not changed.
func (r *Redactor) Input(in Input) Input {
	r.dir = filepath.Clean(in.Dir)
	if r.dir == "." || r.dir == "/" {
		r.dir = ""
	}
	if in.Job != nil {
		j := *in.Job
		// The nodes stay placed by the real locations (D28), whose
		// hashes the page never shows: tokens would not collide where
		// names do.
		if rl, err := in.Job.RankLocations(); err == nil {
			j.RankLocation = rl
		}
		j.Names = nil
		j.Host = make([]string, len(in.Job.Host))
		j.Location = make([]string, len(in.Job.Location))
		for m := range j.Host {
			j.Host[m] = r.Host(in.Job.Host[m])
			j.Location[m] = r.Location(in.Job.Location[m])
		}
		if in.Job.Views != nil {
			j.Views = make([]*ringdump.Dump, len(in.Job.Views))
			for rank, d := range in.Job.Views {
				j.Views[rank] = r.dump(d)
			}
		}
		in.Job = &j
	}
	if in.LocationsFrom != "dumps" {
		in.LocationsFrom = "a locations file"
	}
	in.Dir = "DIR"
	in.JobError = r.Text(in.JobError)
	in.Findings = findingsText(in.Findings, r.Text)
	return in
}

// dump is a copy of a rank's dump with its names as tokens: its host, its
// location's names and its order's note; the rest, hashes included, as it
// was. One Redactor gives one name one token, so two dumps it redacted
// differ where the originals did (a page comparing two jobs compares
// them: score.Diff).
func (r *Redactor) dump(d *ringdump.Dump) *ringdump.Dump {
	if d == nil {
		return nil
	}
	c := *d
	c.Host = r.Host(d.Host)
	c.Warn = r.Text(d.Warn)
	if d.Wiring != nil && d.Order != nil {
		w, o := *d.Wiring, *d.Order
		o.Location, o.Note = r.Location(o.Location), r.Text(o.Note)
		w.Order = &o
		c.Wiring = &w
	}
	return &c
}
