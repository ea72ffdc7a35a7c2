package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What the watchdog reads of the processes it watches, from /proc: the
// tree under a process (by parent id), each thread's scheduler times
// (schedstat: ns on a CPU, ns waiting on a run queue, timeslices), and,
// for the report, each thread's state, wchan and system call.

// procRoot is where proc(5) is mounted; tests point it at a fake tree.
var procRoot = "/proc"

// statFields reads /proc/.../stat: the name (inside the parentheses,
// which may itself hold parentheses) and the fields after it, which
// start with the state and the parent's id.
func statFields(path string) (name string, rest []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", nil, err
	}
	s := string(b)
	open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || shut < open {
		return "", nil, fmt.Errorf("%s: no (name)", path)
	}
	rest = strings.Fields(s[shut+1:])
	if len(rest) < 2 {
		return "", nil, fmt.Errorf("%s: %d fields after the name", path, len(rest))
	}
	return s[open+1 : shut], rest, nil
}

// member is one process of a watched tree.
type member struct {
	pid, ppid int
	name      string
	state     string
}

// descendants lists every process whose chain of parents reaches root,
// root excluded, parents before children. A process that ends while the
// tree is read is left out.
func descendants(root int) []member {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil
	}
	children := map[int][]member{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, rest, err := statFields(filepath.Join(procRoot, e.Name(), "stat"))
		if err != nil {
			continue
		}
		ppid, _ := strconv.Atoi(rest[1])
		children[ppid] = append(children[ppid], member{pid: pid, ppid: ppid, name: name, state: rest[0]})
	}
	var out []member
	for queue := children[root]; len(queue) > 0; {
		m := queue[0]
		queue = queue[1:]
		out = append(out, m)
		queue = append(queue, children[m.pid]...)
	}
	return out
}

// goTest reports whether p is a Go test binary (PKG.test), which prints
// every goroutine's stack on SIGQUIT. stat's name is cut at 15 bytes
// (nccom-rings.test is 16), so past that the first word of the command
// line says.
func goTest(p member) bool {
	if strings.HasSuffix(p.name, ".test") {
		return true
	}
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(p.pid), "cmdline"))
	if err != nil {
		return false
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return strings.HasSuffix(argv0, ".test")
}

// tasks lists a process's thread ids.
func tasks(pid int) []int {
	entries, err := os.ReadDir(filepath.Join(procRoot, strconv.Itoa(pid), "task"))
	if err != nil {
		return nil
	}
	tids := make([]int, 0, len(entries))
	for _, e := range entries {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids
}

// readSchedstat reads a thread's on-CPU and run-queue times.
func readSchedstat(pid, tid int) (taskTimes, bool) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "task", strconv.Itoa(tid), "schedstat"))
	if err != nil {
		return taskTimes{}, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return taskTimes{}, false
	}
	run, err1 := strconv.ParseInt(f[0], 10, 64)
	wait, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return taskTimes{}, false
	}
	return taskTimes{Run: time.Duration(run), Wait: time.Duration(wait)}, true
}

// treeTimes is every thread's times in the processes of tree, by thread id.
func treeTimes(tree []member) map[int]taskTimes {
	out := map[int]taskTimes{}
	for _, m := range tree {
		for _, tid := range tasks(m.pid) {
			if t, ok := readSchedstat(m.pid, tid); ok {
				out[tid] = t
			}
		}
	}
	return out
}

// thread is one thread as the report shows it.
type thread struct {
	tid     int
	name    string
	state   string // R running or runnable, S sleeping, D uninterruptible, T stopped, Z zombie, ...
	wchan   string // the kernel function it sleeps in ("" when running)
	syscall string // the system call it is in, "" when none or unreadable
}

// process is one process as the report shows it.
type process struct {
	member
	threads []thread
}

// describe reads what the report says of each process of tree: its
// threads' states, wchans and system calls.
func describe(tree []member) []process {
	var out []process
	for _, m := range tree {
		dir := filepath.Join(procRoot, strconv.Itoa(m.pid))
		p := process{member: m}
		for _, tid := range tasks(m.pid) {
			tdir := filepath.Join(dir, "task", strconv.Itoa(tid))
			tname, trest, err := statFields(filepath.Join(tdir, "stat"))
			if err != nil {
				continue
			}
			t := thread{tid: tid, name: tname, state: trest[0]}
			if b, err := os.ReadFile(filepath.Join(tdir, "wchan")); err == nil && string(b) != "0" {
				t.wchan = string(b)
			}
			if b, err := os.ReadFile(filepath.Join(tdir, "syscall")); err == nil {
				t.syscall = syscallName(strings.Fields(string(b)))
			}
			p.threads = append(p.threads, t)
		}
		sort.Slice(p.threads, func(i, j int) bool { return p.threads[i].tid < p.threads[j].tid })
		out = append(out, p)
	}
	return out
}

// syscallNames are the calls a waiting thread is usually in; the numbers
// are this architecture's, from package syscall.
var syscallNames = map[int]string{
	syscall.SYS_READ: "read", syscall.SYS_WRITE: "write", syscall.SYS_OPENAT: "openat",
	syscall.SYS_FUTEX: "futex", syscall.SYS_WAIT4: "wait4", syscall.SYS_WAITID: "waitid",
	syscall.SYS_NANOSLEEP: "nanosleep", syscall.SYS_CLOCK_NANOSLEEP: "clock_nanosleep",
	syscall.SYS_PPOLL: "ppoll", syscall.SYS_PSELECT6: "pselect6", syscall.SYS_EPOLL_PWAIT: "epoll_pwait",
	syscall.SYS_RT_SIGSUSPEND: "rt_sigsuspend", syscall.SYS_RT_SIGTIMEDWAIT: "rt_sigtimedwait",
	syscall.SYS_READV: "readv", syscall.SYS_WRITEV: "writev", syscall.SYS_RECVFROM: "recvfrom",
	syscall.SYS_RECVMSG: "recvmsg", syscall.SYS_SENDTO: "sendto", syscall.SYS_SENDMSG: "sendmsg",
	syscall.SYS_ACCEPT4: "accept4", syscall.SYS_CONNECT: "connect", syscall.SYS_FLOCK: "flock",
	syscall.SYS_SCHED_YIELD: "sched_yield", syscall.SYS_FCNTL: "fcntl", syscall.SYS_IOCTL: "ioctl",
}

// syscallName reads /proc/.../syscall's fields: "running", "-1 SP PC"
// (blocked, not in a system call), or the call's number and arguments.
func syscallName(f []string) string {
	if len(f) == 0 || f[0] == "running" || f[0] == "-1" {
		return ""
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return ""
	}
	if name, ok := syscallNames[n]; ok {
		return name
	}
	return "syscall " + f[0]
}
