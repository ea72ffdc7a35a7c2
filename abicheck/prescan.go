package abicheck

import (
	"context"
	"debug/dwarf"
	"encoding/binary"
	"sort"
)

// What dwarf.New parses before it returns, and what it would cost on a
// crafted file: it keeps one record per unit (a .debug_info of empty
// 11-byte units has millions) and one parsed abbreviation table per
// distinct table offset the units name, each parsed to its end (units
// naming every offset of one long table cost its length squared). prescan
// walks the unit headers and those tables without allocating per entry,
// and refuses what exceeds MaxUnits, MaxAbbrevs, MaxAbbrevAttrs or
// MaxAttrsPerAbbrev. It also notes where each DWARF 5 type unit's type
// is, for DW_FORM_ref_sig8 references. Malformed headers are left to
// dwarf.New, whose error names them.

// DWARF is a library's DWARF as this package reads it: debug/dwarf's
// entry decoder over sections whose sizes were checked, and what prescan
// found. Types are resolved by FindStructs within the limits, never
// through dwarf.Data.Type.
type DWARF struct {
	data     *dwarf.Data
	infoSize int
	sigs     map[uint64]dwarf.Offset // type signature -> the type's entry
}

// newDWARF checks sections (by their suffix: "info", "abbrev", ...) with
// prescan and builds the DWARF data.
func newDWARF(ctx context.Context, sections map[string][]byte) (*DWARF, error) {
	info, abbrev := sections["info"], sections["abbrev"]
	sigs, err := prescan(ctx, info, abbrev)
	if err != nil {
		return nil, err
	}
	d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, sections["str"])
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"str_offsets", "line_str", "addr"} {
		if b, ok := sections[name]; ok {
			if err := d.AddSection(".debug_"+name, b); err != nil {
				return nil, err
			}
		}
	}
	return &DWARF{data: d, infoSize: len(info), sigs: sigs}, nil
}

// DWARF 5 unit types with a type signature.
const (
	utType      = 0x02
	utSplitType = 0x06
)

// prescan checks what dwarf.New would parse of info and abbrev (see
// above) and returns the DWARF 5 type units' signatures.
func prescan(ctx context.Context, info, abbrev []byte) (map[uint64]dwarf.Offset, error) {
	order, ok := sniffOrder(info)
	if !ok {
		return nil, nil // dwarf.New says what is wrong
	}
	sigs := map[uint64]dwarf.Offset{}
	tables := map[uint64]bool{}
	units := 0
	for off := uint64(0); off < uint64(len(info)); {
		if units%4096 == 0 {
			if err := checkDone(ctx); err != nil {
				return nil, err
			}
		}
		base := off
		b := info[off:]
		if len(b) < 4 {
			break
		}
		length, hdr, is64 := uint64(order.Uint32(b)), uint64(4), false
		if length == 0xffffffff {
			if len(b) < 12 {
				break
			}
			length, hdr, is64 = order.Uint64(b[4:]), 12, true
		}
		if length > uint64(len(b))-hdr {
			break // dwarf.New: underflow
		}
		off += hdr + length
		if length == 0 {
			continue // dwarf.New skips empty units
		}
		if units++; units > MaxUnits {
			return nil, errLimit(".debug_info has more than %d units (MaxUnits; the one at %#x is past it)", MaxUnits, base)
		}
		u := b[hdr : hdr+length]
		if len(u) < 2 {
			break
		}
		vers := order.Uint16(u)
		if vers < 2 || vers > 5 {
			break // dwarf.New: unsupported version
		}
		u = u[2:]
		var utype byte
		if vers >= 5 {
			if len(u) < 2 {
				break
			}
			utype, u = u[0], u[2:]
		}
		var aoff uint64
		if is64 {
			if len(u) < 8 {
				break
			}
			aoff, u = order.Uint64(u), u[8:]
		} else {
			if len(u) < 4 {
				break
			}
			aoff, u = uint64(order.Uint32(u)), u[4:]
		}
		tables[aoff] = true
		if vers < 5 {
			if len(u) < 1 {
				break
			}
			u = u[1:]
		}
		if utype == utType || utype == utSplitType {
			n := 12
			if is64 {
				n = 16
			}
			if len(u) >= n {
				sig := order.Uint64(u)
				var toff uint64
				if is64 {
					toff = order.Uint64(u[8:])
				} else {
					toff = uint64(order.Uint32(u[8:]))
				}
				if toff < length+hdr {
					sigs[sig] = dwarf.Offset(base + toff)
				}
			}
		}
	}
	return sigs, checkAbbrevTables(ctx, abbrev, tables)
}

// sniffOrder finds .debug_info's byte order as dwarf.New does, from the
// first unit's version number.
func sniffOrder(info []byte) (binary.ByteOrder, bool) {
	off := 4
	if len(info) >= 4 && info[0] == 0xff && info[1] == 0xff && info[2] == 0xff && info[3] == 0xff {
		off = 12
	}
	if len(info) < off+2 {
		return nil, false
	}
	x, y := info[off], info[off+1]
	switch {
	case x == 0 && y == 0:
		return nil, false
	case x == 0:
		return binary.BigEndian, true
	case y == 0:
		return binary.LittleEndian, true
	}
	return nil, false
}

// checkAbbrevTables walks each abbreviation table the units name (as
// dwarf.New's parseAbbrev will), counting, and stops at the first limit.
// A LEB128 number longer than 10 bytes (no 64-bit value needs more) is
// refused too: each distinct offset inside a long one starts a table that
// would be parsed again from there.
func checkAbbrevTables(ctx context.Context, abbrev []byte, tables map[uint64]bool) error {
	offs := make([]uint64, 0, len(tables))
	for off := range tables {
		offs = append(offs, off)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	abbrevs, attrs := 0, 0
	for i, start := range offs {
		if i%1024 == 0 {
			if err := checkDone(ctx); err != nil {
				return err
			}
		}
		if start >= uint64(len(abbrev)) {
			continue
		}
		p := abbrev[start:]
		at := func() uint64 { return uint64(len(abbrev) - len(p)) }
		leb := func() (uint64, bool) {
			var v uint64
			for i := 0; i < len(p) && i < 10; i++ {
				v |= uint64(p[i]&0x7f) << (7 * uint(i))
				if p[i]&0x80 == 0 {
					p = p[i+1:]
					return v, true
				}
			}
			if len(p) >= 10 {
				return 0, false
			}
			p = nil // dwarf reads an unterminated number at the end as 0
			return 0, true
		}
		tooLong := func() error {
			return errLimit(".debug_abbrev has a LEB128 number longer than 10 bytes at %#x (in the table at %#x)", at(), start)
		}
		for {
			id, ok := leb()
			if !ok {
				return tooLong()
			}
			if id == 0 {
				break
			}
			if abbrevs++; abbrevs > MaxAbbrevs {
				return errLimit(".debug_abbrev's tables hold more than %d abbreviations (MaxAbbrevs; the table at %#x reaches %#x)", MaxAbbrevs, start, at())
			}
			entry := at()
			if _, ok := leb(); !ok { // tag
				return tooLong()
			}
			if len(p) > 0 {
				p = p[1:] // children
			}
			n := 0
			for {
				name, ok1 := leb()
				form, ok2 := leb()
				if !ok1 || !ok2 {
					return tooLong()
				}
				if name == 0 && form == 0 {
					break
				}
				if form == 0x21 { // DW_FORM_implicit_const
					if _, ok := leb(); !ok {
						return tooLong()
					}
				}
				if n++; n > MaxAttrsPerAbbrev {
					return errLimit(".debug_abbrev's abbreviation %d at %#x has more than %d attributes (MaxAttrsPerAbbrev)", id, entry, MaxAttrsPerAbbrev)
				}
				if attrs++; attrs > MaxAbbrevAttrs {
					return errLimit(".debug_abbrev's tables hold more than %d attribute specifications (MaxAbbrevAttrs; the table at %#x reaches %#x)", MaxAbbrevAttrs, start, at())
				}
				if len(p) == 0 {
					break
				}
			}
			if len(p) == 0 {
				break
			}
		}
	}
	return nil
}
