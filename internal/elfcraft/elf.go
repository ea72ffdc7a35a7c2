// Package elfcraft writes crafted ELF files for the tests of abicheck,
// nccom-abi and the self-check (issue 21): sections added to a real
// shared object (which still loads: its program headers are untouched),
// compressed sections that claim more than they hold or expand a little
// data into a lot, and DWARF assembled by hand with the cycles and depths
// no compiler writes. ELF64 little-endian only; test code, not a library
// for the product.
package elfcraft

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"fmt"
)

var le = binary.LittleEndian

// Section is one section to add to a file.
type Section struct {
	Name  string
	Type  elf.SectionType // SHT_PROGBITS when zero
	Flags elf.SectionFlag
	Data  []byte
	// Size, when non-zero, is written as sh_size instead of len(Data): a
	// section header that claims more than the file holds.
	Size uint64
}

const (
	ehdrSize = 64
	shdrSize = 64
)

// Minimal is the smallest ELF64 x86-64 shared object debug/elf opens: its
// header, the null section header and .shstrtab. It does not load.
func Minimal() []byte {
	shstrtab := []byte("\x00.shstrtab\x00")
	out := make([]byte, ehdrSize)
	copy(out, "\x7fELF")
	out[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	out[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	out[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	le.PutUint16(out[16:], uint16(elf.ET_DYN))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], uint32(elf.EV_CURRENT))
	le.PutUint16(out[52:], ehdrSize)
	le.PutUint16(out[54:], 56) // e_phentsize
	le.PutUint16(out[58:], shdrSize)
	strOff := len(out)
	out = append(out, shstrtab...)
	out = pad(out, 8)
	shoff := len(out)
	out = append(out, make([]byte, 2*shdrSize)...)
	sh := out[shoff+shdrSize:]
	le.PutUint32(sh[0:], 1) // ".shstrtab"
	le.PutUint32(sh[4:], uint32(elf.SHT_STRTAB))
	le.PutUint64(sh[24:], uint64(strOff))
	le.PutUint64(sh[32:], uint64(len(shstrtab)))
	le.PutUint64(sh[48:], 1)
	le.PutUint64(out[40:], uint64(shoff))
	le.PutUint16(out[60:], 2) // e_shnum
	le.PutUint16(out[62:], 1) // e_shstrndx
	return out
}

// AddSections returns base (an ELF64 little-endian file) with secs after
// its bytes, then a new .shstrtab and a new section header table holding
// base's sections and secs. A section of base with the name of one of secs
// is dropped from the table (its bytes stay).
func AddSections(base []byte, secs ...Section) ([]byte, error) {
	f, err := elf.NewFile(bytes.NewReader(base))
	if err != nil {
		return nil, err
	}
	if f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
		return nil, fmt.Errorf("elfcraft: only ELF64 little-endian files")
	}
	shoff := le.Uint64(base[40:])
	shnum := int(le.Uint16(base[60:]))
	if shnum != len(f.Sections) || shoff+uint64(shnum*shdrSize) > uint64(len(base)) {
		return nil, fmt.Errorf("elfcraft: unexpected section header table")
	}
	replaced := map[string]bool{}
	for _, s := range secs {
		replaced[s.Name] = true
	}

	out := append([]byte(nil), base...)
	names := []byte{0}
	nameOf := func(name string) uint32 {
		if name == "" {
			return 0
		}
		i := len(names)
		names = append(append(names, name...), 0)
		return uint32(i)
	}
	var headers [][]byte
	for i, s := range f.Sections {
		if i > 0 && (replaced[s.Name] || i == int(le.Uint16(base[62:]))) {
			continue // replaced, or the old .shstrtab (a new one follows)
		}
		h := append([]byte(nil), base[shoff+uint64(i*shdrSize):shoff+uint64((i+1)*shdrSize)]...)
		le.PutUint32(h[0:], nameOf(s.Name))
		headers = append(headers, h)
	}
	for _, s := range secs {
		out = pad(out, 8)
		h := make([]byte, shdrSize)
		typ := s.Type
		if typ == 0 {
			typ = elf.SHT_PROGBITS
		}
		size := uint64(len(s.Data))
		if s.Size != 0 {
			size = s.Size
		}
		le.PutUint32(h[0:], nameOf(s.Name))
		le.PutUint32(h[4:], uint32(typ))
		le.PutUint64(h[8:], uint64(s.Flags))
		le.PutUint64(h[24:], uint64(len(out)))
		le.PutUint64(h[32:], size)
		le.PutUint64(h[48:], 1)
		headers = append(headers, h)
		out = append(out, s.Data...)
	}
	strndx := len(headers)
	h := make([]byte, shdrSize)
	le.PutUint32(h[0:], nameOf(".shstrtab"))
	le.PutUint32(h[4:], uint32(elf.SHT_STRTAB))
	le.PutUint64(h[24:], uint64(len(out)))
	le.PutUint64(h[32:], uint64(len(names)))
	le.PutUint64(h[48:], 1)
	headers = append(headers, h)
	out = append(out, names...)

	out = pad(out, 8)
	le.PutUint64(out[40:], uint64(len(out)))
	le.PutUint16(out[60:], uint16(len(headers)))
	le.PutUint16(out[62:], uint16(strndx))
	for _, h := range headers {
		out = append(out, h...)
	}
	return out, nil
}

func pad(b []byte, align int) []byte {
	for len(b)%align != 0 {
		b = append(b, 0)
	}
	return b
}

// Compressed is an SHF_COMPRESSED section's contents: the ELF64
// compression header declaring size bytes uncompressed, then payload.
func Compressed(typ elf.CompressionType, size uint64, payload []byte) []byte {
	out := make([]byte, 24, 24+len(payload))
	le.PutUint32(out[0:], uint32(typ))
	le.PutUint64(out[8:], size)
	le.PutUint64(out[16:], 1)
	return append(out, payload...)
}

// Zdebug is a .zdebug_* section's contents (the GNU format before
// SHF_COMPRESSED): "ZLIB", the size big-endian, then a zlib stream.
func Zdebug(size uint64, payload []byte) []byte {
	out := make([]byte, 12, 12+len(payload))
	copy(out, "ZLIB")
	binary.BigEndian.PutUint64(out[4:], size)
	return append(out, payload...)
}

// ZstdZeros is a zstd frame that decompresses to n zero bytes: RLE
// blocks of 128 KiB, 4 bytes each (2 GiB in 64 KiB).
func ZstdZeros(n uint64) []byte {
	const block = 128 << 10
	out := []byte{0x28, 0xb5, 0x2f, 0xfd, // magic
		0x00,           // frame header: no content size, no checksum, no dictionary
		(17 - 10) << 3, // window 2^17 bytes
	}
	for n > 0 {
		size := min(n, block)
		n -= size
		h := uint32(size)<<3 | 1<<1 // RLE
		if n == 0 {
			h |= 1 // the last block
		}
		out = append(out, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return out
}

// ZlibZeros is a zlib stream of n zero bytes (about 1 KiB per MiB).
func ZlibZeros(n uint64) []byte {
	var buf bytes.Buffer
	w, _ := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	zero := make([]byte, 1<<20)
	for n > 0 {
		k := min(n, uint64(len(zero)))
		_, _ = w.Write(zero[:k])
		n -= k
	}
	_ = w.Close()
	return buf.Bytes()
}
