package abicheck

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Reading sections within the limits. debug/elf's Section.Data reads, or
// decompresses, as many bytes as the section header (or the compression
// header inside the section) declares: a zstd-compressed .debug_info of
// 88 KB that declares and expands to 2 GiB took nccom-abi to 3.9 GB. Here
// every declared size is checked against MaxSectionSize and
// MaxDecompressed first, and what must be copied goes into an anonymous
// mapping of exactly that size, whose failure is an error.

// checkELFHeaders checks, before debug/elf reads them, the parts of the
// file it reads whole when it opens it: the section header table and the
// section name table. Anything that is not ELF is left to elf.NewFile,
// whose error says so.
func checkELFHeaders(r io.ReaderAt, size int64) error {
	var ident [elf.EI_NIDENT]byte
	if _, err := r.ReadAt(ident[:], 0); err != nil || string(ident[:4]) != elf.ELFMAG {
		return nil
	}
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(ident[elf.EI_DATA]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	is64 := elf.Class(ident[elf.EI_CLASS]) == elf.ELFCLASS64
	hdr := make([]byte, 64)
	if _, err := r.ReadAt(hdr, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	var shoff uint64
	var shentsize, shnum, shstrndx uint64
	if is64 {
		shoff = order.Uint64(hdr[40:])
		shentsize, shnum, shstrndx = uint64(order.Uint16(hdr[58:])), uint64(order.Uint16(hdr[60:])), uint64(order.Uint16(hdr[62:]))
	} else {
		shoff = uint64(order.Uint32(hdr[32:]))
		shentsize, shnum, shstrndx = uint64(order.Uint16(hdr[46:])), uint64(order.Uint16(hdr[48:])), uint64(order.Uint16(hdr[50:]))
	}
	want := uint64(40)
	if is64 {
		want = 64
	}
	if shoff == 0 || shentsize != want || shoff >= uint64(size) {
		return nil // no sections, or a table debug/elf refuses itself
	}
	// Section 0 holds the count and the name table's index when they do
	// not fit the header (extended numbering).
	sh := make([]byte, want)
	read := func(i uint64) bool {
		off := shoff + i*want
		if i > uint64(size)/want || off+want > uint64(size) {
			return false
		}
		_, err := r.ReadAt(sh, int64(off))
		return err == nil
	}
	field := func(off64, off32 int) uint64 {
		if is64 {
			return order.Uint64(sh[off64:])
		}
		return uint64(order.Uint32(sh[off32:]))
	}
	link := func() uint64 {
		if is64 {
			return uint64(order.Uint32(sh[40:]))
		}
		return uint64(order.Uint32(sh[24:]))
	}
	if shnum == 0 || shstrndx == uint64(elf.SHN_XINDEX) {
		if !read(0) {
			return nil
		}
		if shnum == 0 {
			shnum = field(32, 20)
		}
		if shstrndx == uint64(elf.SHN_XINDEX) {
			shstrndx = link()
		}
	}
	if shnum > uint64(size)/want {
		return errLimit("the ELF header declares %d section headers at file offset %#x, more than the %d-byte file holds", shnum, shoff, size)
	}
	if shstrndx == 0 || shstrndx >= shnum || !read(shstrndx) {
		return nil
	}
	flags := elf.SectionFlag(field(8, 8))
	strSize := field(32, 20)
	switch {
	case flags&elf.SHF_COMPRESSED != 0:
		return errLimit("its section name table (section header %d, at file offset %#x) is compressed, which no linker writes; not decompressed", shstrndx, shoff+shstrndx*want)
	case strSize > maxElfStrtab:
		return errLimit("its section name table (section header %d, at file offset %#x) declares %d bytes, more than the %d this reads", shstrndx, shoff+shstrndx*want, strSize, maxElfStrtab)
	}
	return nil
}

// sectionBytes is s's contents, uncompressed: in place in the mapping
// when the section is stored uncompressed and the file is mapped, else
// read or decompressed into an anonymous mapping that Close releases.
// The sizes are checked first.
func (l *Library) sectionBytes(ctx context.Context, s *elf.Section) ([]byte, error) {
	end := s.Offset + s.FileSize
	if end < s.Offset || end > uint64(l.size) {
		return nil, errLimit("section %s (file offset %#x, %d bytes) runs past the end of the %d-byte file", s.Name, s.Offset, s.FileSize, l.size)
	}
	size, kind, err := l.declaredSize(s)
	if err != nil {
		return nil, err
	}
	if size > MaxSectionSize {
		return nil, errLimit("section %s%s declares %d bytes, more than the %d bytes (MaxSectionSize) a DWARF section may have here; not %s",
			s.Name, kind, size, MaxSectionSize, map[bool]string{true: "decompressed", false: "read"}[kind != ""])
	}
	if kind == "" && l.mapped != nil {
		return l.mapped[s.Offset:end:end], nil
	}
	if l.used+size > MaxDecompressed {
		return nil, errLimit("section %s%s declares %d bytes, which with the %d already read exceed the %d bytes (MaxDecompressed) read into memory per library; not %s",
			s.Name, kind, size, l.used, MaxDecompressed, map[bool]string{true: "decompressed", false: "read"}[kind != ""])
	}
	buf, err := allocAnon(int(size))
	if err != nil {
		return nil, errLimit("section %s%s: cannot map %d bytes to hold it: %v", s.Name, kind, size, err)
	}
	l.bufs = append(l.bufs, buf)
	l.used += size
	var r io.Reader = io.NewSectionReader(l.readerAt(), int64(s.Offset), int64(s.FileSize))
	if kind != "" {
		r = s.Open() // debug/elf's decompressor; it reads no more than size
	}
	for n := 0; n < len(buf); {
		if err := checkDone(ctx); err != nil {
			return nil, err
		}
		k, err := io.ReadFull(r, buf[n:min(len(buf), n+1<<20)])
		n += k
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%s%s holds %d bytes, not the %d it declares", s.Name, kind, n, size)
			}
			return nil, err
		}
	}
	return buf, nil
}

// declaredSize is the size s's contents have uncompressed, read from its
// compression header when it has one (kind then says which, for
// messages: " (zstd-compressed)"), else its size in the file.
func (l *Library) declaredSize(s *elf.Section) (size uint64, kind string, err error) {
	raw := io.NewSectionReader(l.readerAt(), int64(s.Offset), int64(s.FileSize))
	order := l.File.ByteOrder
	switch {
	case s.Flags&elf.SHF_COMPRESSED != 0:
		// Elf64_Chdr: type, reserved, size, alignment; Elf32_Chdr: type,
		// size, alignment.
		hdr := make([]byte, 24)
		n := 24
		if l.File.Class == elf.ELFCLASS32 {
			n = 12
		}
		if _, err := raw.ReadAt(hdr[:n], 0); err != nil {
			return 0, "", fmt.Errorf("section %s is compressed but too short for its compression header", s.Name)
		}
		typ := elf.CompressionType(order.Uint32(hdr))
		if n == 24 {
			size = order.Uint64(hdr[8:])
		} else {
			size = uint64(order.Uint32(hdr[4:]))
		}
		switch typ {
		case elf.COMPRESS_ZLIB:
			kind = " (zlib-compressed, SHF_COMPRESSED)"
		case elf.COMPRESS_ZSTD:
			kind = " (zstd-compressed, SHF_COMPRESSED)"
		default:
			return 0, "", fmt.Errorf("section %s is compressed with unknown type %d", s.Name, typ)
		}
		if s.Flags&elf.SHF_ALLOC != 0 {
			return 0, "", fmt.Errorf("section %s is compressed and allocated, which ELF does not allow", s.Name)
		}
		return size, kind, nil
	case len(s.Name) > 8 && s.Name[:8] == ".zdebug_":
		// "ZLIB" and the size, big-endian; without the magic debug/elf
		// reads the section as stored, and so does this.
		hdr := make([]byte, 12)
		if n, _ := raw.ReadAt(hdr, 0); n == 12 && string(hdr[:4]) == "ZLIB" {
			return binary.BigEndian.Uint64(hdr[4:]), " (zlib-compressed, .zdebug)", nil
		}
	}
	return s.FileSize, "", nil
}
