//go:build linux

// Package asuser lets a test act as other users of the machine, as the
// attacks of docs/security.md need: a job's user and someone who shares a
// directory with them. A command runs with another user's ids (the
// kernel's setresuid, as setpriv --reuid --regid --clear-groups does),
// which needs root; without it a test skips, saying why.
package asuser

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// Prepare is how a test as other users starts: Require, then a Dir and
// the test binary's Self copy in it.
func Prepare(t testing.TB) (dir, self string) {
	t.Helper()
	Require(t)
	dir = Dir(t)
	return dir, Self(t, dir)
}

// Command is exec.Command(name, args...) run as uid, with gid uid and no
// supplementary groups, in the root directory (the caller's working
// directory may not be open to uid).
func Command(uid int, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	as(cmd, uid)
	return cmd
}

// as makes cmd run as uid (gid uid, no supplementary groups) in "/".
func as(cmd *exec.Cmd, uid int) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	cmd.Dir = "/"
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

// toolArgs is the variable that carries a helper process's arguments,
// separated by NUL bytes' stand-in \x1f (an environment value cannot hold
// NUL).
const toolArgs = "NCCOMRING_TEST_TOOL_ARGS"

// HelperArgs is the argument list Tool passed to the test binary, and
// whether this process is such a helper: a package's TestHelperTool runs
// its command's run function on it and exits with its code.
func HelperArgs() ([]string, bool) {
	v, ok := os.LookupEnv(toolArgs)
	if !ok {
		return nil, false
	}
	return strings.Split(v, "\x1f"), true
}

// Result is what a helper process did.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Tool runs the test binary self (Self's copy) as uid, as a helper that
// runs its package's command with args (HelperArgs), and returns its exit
// code and output. A helper still running after a minute is killed and
// fails t: that limit only detects a hang (a tool waiting to open a FIFO
// for ever); nothing is timed, the tools take a fraction of a second.
func Tool(t testing.TB, self string, uid int, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "-test.run=^TestHelperTool$", "-test.count=1")
	as(cmd, uid)
	cmd.Env = append(os.Environ(), toolArgs+"="+strings.Join(args, "\x1f"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%q as uid %d still ran after a minute and was killed: it hangs (waiting on a FIFO?); this limit only detects a hang. stderr: %s", args, uid, stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%q as uid %d: %v", args, uid, err)
	}
	return Result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

// Share makes, in base, the victim's home with a file of theirs in it
// (home/precious, "precious\n") and a directory anyone can write into,
// not sticky (shared: a group share), where the attacker plants things
// under the names the victim's tool will write.
func Share(t testing.TB, base string) (home, precious, shared string) {
	t.Helper()
	home = filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	precious = filepath.Join(home, "precious")
	if err := os.WriteFile(precious, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Chown(t, Victim, home, precious)
	shared = filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	return home, precious, shared
}

// PlantFIFO makes a FIFO at path, the attacker's, that anyone may open
// for writing and no reader will ever open: an open for writing waits
// for ever.
func PlantFIFO(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o622); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o622); err != nil {
		t.Fatal(err)
	}
	Chown(t, Attacker, path)
}
