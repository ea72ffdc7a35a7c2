//go:build linux

// Package asuser lets a test act as other users of the machine, as the
// attacks of docs/security.md need: a job's user and someone who shares a
// directory with them. A command runs with another user's ids (the
// kernel's setresuid, as setpriv --reuid --regid --clear-groups does),
// which needs root; without it a test skips, saying why.
package asuser

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Two users no system gives a name: the job's (the victim's) and another
// one sharing a directory with it (the attacker).
const (
	Victim   = 61234
	Attacker = 61235
)

// Require skips t unless commands can run as other users here.
func Require(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skipf("needs root to run commands as other users (uids %d and %d); euid is %d", Victim, Attacker, os.Geteuid())
	}
	if out, err := Command(Victim, "/bin/true").CombinedOutput(); err != nil {
		t.Skipf("cannot run a command as uid %d here (a user namespace without that id mapped?): %v %s", Victim, err, out)
	}
}

// Command is exec.Command(name, args...) run as uid, with gid uid and no
// supplementary groups, in the root directory (the caller's working
// directory may not be open to uid).
func Command(uid int, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	cmd.Dir = "/"
	return cmd
}

// Dir is a new directory every user can reach and read (t.TempDir's are
// its owner's alone), removed when t ends. It skips t when a directory
// above it is closed to other users.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("%s, above the test's directory, cannot be passed through by other users: %v", p, err)
		}
		if p == "/" {
			return dir
		}
	}
}

// Self copies the running test binary into dir (Dir's) and returns the
// copy's path: the build cache that holds the binary is its owner's only.
func Self(t testing.TB, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(dir, strings.TrimSuffix(filepath.Base(exe), ".exe"))
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Chown gives path (not what a link there names) to uid and its group.
func Chown(t testing.TB, uid int, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Lchown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
}
