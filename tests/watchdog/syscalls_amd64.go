package main

import "syscall"

// The waiting calls x86-64 has besides the ones every architecture has
// (arm64 has only their p- and _pwait forms).
func init() {
	syscallNames[syscall.SYS_POLL] = "poll"
	syscallNames[syscall.SYS_EPOLL_WAIT] = "epoll_wait"
	syscallNames[syscall.SYS_SELECT] = "select"
	syscallNames[syscall.SYS_PAUSE] = "pause"
}
