package abicheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
)

// FileID names a file as the kernel does: the major and minor numbers of
// its device and its inode. Two open files with the same FileID are one
// file, whatever paths led to them.
type FileID struct {
	Major, Minor uint32
	Inode        uint64
}

func (id FileID) device() string { return fmt.Sprintf("%d:%d", id.Major, id.Minor) }

func (id FileID) String() string {
	return fmt.Sprintf("device %s, inode %d", id.device(), id.Inode)
}

// procSelfMaps opens the list of the process's mappings; the tests put
// their own text in its place.
var procSelfMaps = func() (io.ReadCloser, error) { return os.Open("/proc/self/maps") }

// onOverlay says whether f lives on an overlay filesystem, whose device
// and inode numbers a mapping of the file need not share (the kernel may
// name the file of the layer below there); a variable for the tests.
var onOverlay = func(f *os.File) bool {
	const overlayMagic = 0x794c7630 // OVERLAYFS_SUPER_MAGIC
	conn, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var st syscall.Statfs_t
	var serr error
	if err := conn.Control(func(fd uintptr) { serr = syscall.Fstatfs(int(fd), &st) }); err != nil || serr != nil {
		return false
	}
	return uint64(st.Type) == overlayMagic
}

// maxMapsLine bounds the part of a /proc/self/maps line that is looked at:
// the address range, permissions, offset, device and inode come first and
// take under 100 bytes; the path after them is skipped, however long.
const maxMapsLine = 256

// mappingAt reads /proc/self/maps lines from r and returns the device and
// inode of the file mapped at addr; false when no line holds addr (or
// its line maps no file: inode 0). It reads line by line, in bounded
// memory, and stops at that line.
func mappingAt(r io.Reader, addr uint64) (FileID, bool, error) {
	br := bufio.NewReaderSize(r, 4096)
	var buf [maxMapsLine]byte
	for {
		line, err := br.ReadSlice('\n')
		// ReadSlice's bytes do not outlive its next call; a long path is
		// skipped to the line's end.
		head := buf[:copy(buf[:], line)]
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = br.ReadSlice('\n')
		}
		if id, ok, inLine := parseMapsLine(head, addr); inLine {
			return id, ok, nil
		}
		if err == io.EOF {
			return FileID{}, false, nil
		}
		if err != nil {
			return FileID{}, false, err
		}
	}
}

// parseMapsLine reads "start-end perms offset major:minor inode [path]":
// inLine when [start, end) holds addr, ok when the line is well formed and
// maps a file there.
func parseMapsLine(line []byte, addr uint64) (id FileID, ok, inLine bool) {
	fields := bytes.Fields(line)
	if len(fields) < 5 {
		return FileID{}, false, false
	}
	lo, hi, found := bytes.Cut(fields[0], []byte("-"))
	if !found {
		return FileID{}, false, false
	}
	start, err1 := strconv.ParseUint(string(lo), 16, 64)
	end, err2 := strconv.ParseUint(string(hi), 16, 64)
	if err1 != nil || err2 != nil || addr < start || addr >= end {
		return FileID{}, false, false
	}
	maj, mnr, found := bytes.Cut(fields[3], []byte(":"))
	major, err1 := strconv.ParseUint(string(maj), 16, 32)
	minor, err2 := strconv.ParseUint(string(mnr), 16, 32)
	inode, err3 := strconv.ParseUint(string(fields[4]), 10, 64)
	if !found || err1 != nil || err2 != nil || err3 != nil || inode == 0 {
		return FileID{}, false, true
	}
	return FileID{uint32(major), uint32(minor), inode}, true, true
}

// openedID is the FileID of the open file f (fstat), with the device
// number split as glibc's major() and minor() split it.
func openedID(f *os.File) (FileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileID{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return FileID{}, errors.New("no device and inode in its status")
	}
	dev := uint64(st.Dev)
	major := uint32((dev>>8)&0xfff | (dev>>32)&^0xfff)
	minor := uint32(dev&0xff | (dev>>12)&^0xff)
	return FileID{major, minor, uint64(st.Ino)}, nil
}

// sameFile says whether l, the file opened at obj's path, is the file the
// loader mapped for obj: the device and inode of the mapping at obj.Addr
// (from /proc/self/maps; /proc/self/map_files would name the file itself,
// but needs CAP_SYS_ADMIN) against fstat of the file opened. replaced is
// why it is not (another file was put at the path after load, with the
// same build ID: the caller compared those first); weaker, when they
// could not be compared (no mapping address, no /proc, an overlay or
// btrfs filesystem, which can report other numbers for the file than its
// mapping has), is why only the build ID (and maybe the inode) vouches
// for it. Both "" when the two are one file.
func sameFile(l *Library, obj MappedObject) (replaced, weaker string) {
	opened, err := openedID(l.file)
	if err != nil {
		return "", fmt.Sprintf("fstat of the file opened failed: %v", err)
	}
	if obj.Addr == 0 {
		return "", "the loader gave no address of a segment of it mapped from its file"
	}
	maps, err := procSelfMaps()
	if err != nil {
		return "", fmt.Sprintf("/proc/self/maps cannot be read: %v", err)
	}
	mapped, ok, err := mappingAt(maps, obj.Addr)
	maps.Close()
	switch {
	case err != nil:
		return "", fmt.Sprintf("/proc/self/maps cannot be read: %v", err)
	case !ok:
		return "", fmt.Sprintf("/proc/self/maps has no file mapped at %#x, where it was loaded", obj.Addr)
	case mapped == opened:
		return "", ""
	case mapped.Inode == opened.Inode:
		return "", fmt.Sprintf("the file opened has %s and the mapping device %s, as an overlay or btrfs filesystem reports its own device: only the inode could be compared", opened, mapped.device())
	case onOverlay(l.file):
		return "", fmt.Sprintf("the file opened (%s) is on an overlay filesystem, whose numbers the mapping's (%s) need not be", opened, mapped)
	}
	return fmt.Sprintf("the file at %s (%s) is not the file mapped (%s), though it carries the mapped %s's build ID %s: another file was put at its path after it was loaded",
		l.Path, opened, mapped, LibnccomSONAME, obj.BuildID), ""
}
