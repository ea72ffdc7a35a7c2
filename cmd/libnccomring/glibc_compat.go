package main

// The glibc floor (issue 9; glibc_compat.c says how it works): every
// reference to a libc function whose default version is newer than the
// floor goes through a wrapper bound to the function's original version,
// and the library records NEEDED libpthread.so.0 and libdl.so.2, where a
// glibc older than 2.34 keeps those functions (stubs on 2.34+).
// mk/glibc-floor.sh (make test-glibc) checks the result.

/*
#cgo linux,amd64 LDFLAGS: -Wl,--push-state,--no-as-needed -l:libpthread.so.0 -l:libdl.so.2 -Wl,--pop-state
#cgo linux,amd64 LDFLAGS: -Wl,--wrap=dlopen -Wl,--wrap=dlclose -Wl,--wrap=dlsym -Wl,--wrap=dladdr -Wl,--wrap=dlerror
#cgo linux,amd64 LDFLAGS: -Wl,--wrap=pthread_create -Wl,--wrap=pthread_once -Wl,--wrap=pthread_key_create
#cgo linux,amd64 LDFLAGS: -Wl,--wrap=pthread_setspecific -Wl,--wrap=pthread_getspecific
#cgo linux,amd64 LDFLAGS: -Wl,--wrap=pthread_attr_getstack -Wl,--wrap=pthread_attr_getstacksize
#cgo linux,amd64 LDFLAGS: -Wl,--wrap=pthread_getattr_np -Wl,--wrap=pthread_sigmask
*/
import "C"
