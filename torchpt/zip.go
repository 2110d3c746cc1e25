package torchpt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// Zip constants (PKWARE APPNOTE.TXT 4.3).
const (
	sigLocal      = 0x04034b50
	sigCentral    = 0x02014b50
	sigEnd        = 0x06054b50
	sigEnd64      = 0x06064b50
	sigEnd64Loc   = 0x07064b50
	sigDescriptor = 0x08074b50
	// flags of every record: sizes in a data descriptor (bit 3), UTF-8
	// names (bit 11), as miniz writes them for PyTorch.
	flags         = 0x0808
	localHdrLen   = 30
	centralHdrLen = 46
	endLen        = 22
	end64Len      = 56
	end64LocLen   = 20
	// alignment of every record's data (inline_container.h kFieldAlignment).
	alignment = 64
	u32max    = math.MaxUint32
)

// zipEntry is one record written by zipWriter.
type zipEntry struct {
	name   string
	offset uint64 // of the local header
	size   uint64
	crc    uint32
}

// zipWriter writes an uncompressed zip archive the way PyTorch's
// PyTorchStreamWriter drives miniz: stored records, data aligned to 64 bytes
// with an "FB" extra field, CRC and sizes in a data descriptor after the data
// (so nothing is patched afterwards), no timestamps, ZIP64 end records.
type zipWriter struct {
	w       io.Writer
	pos     uint64
	entries []zipEntry
}

func newZipWriter(w io.Writer) *zipWriter { return &zipWriter{w: w} }

func (z *zipWriter) write(p []byte) error {
	n, err := z.w.Write(p)
	z.pos += uint64(n)
	return err
}

// localExtra returns the local header's extra field for a record of the
// given name length and size starting at z.pos: a ZIP64 field when the
// offset or size does not fit 32 bits, then the FB padding field that puts
// the data at a multiple of 64.
func (z *zipWriter) localExtra(nameLen int, size uint64) []byte {
	var extra []byte
	if size >= u32max || z.pos >= u32max {
		var f []byte
		if size >= u32max {
			f = binary.LittleEndian.AppendUint64(f, size)
			f = binary.LittleEndian.AppendUint64(f, size)
		}
		if z.pos >= u32max {
			f = binary.LittleEndian.AppendUint64(f, z.pos)
		}
		extra = binary.LittleEndian.AppendUint16(extra, 1)
		extra = binary.LittleEndian.AppendUint16(extra, uint16(len(f)))
		extra = append(extra, f...)
	}
	start := z.pos + localHdrLen + uint64(nameLen) + uint64(len(extra)) + 4
	pad := (alignment - start%alignment) % alignment
	extra = append(extra, 'F', 'B')
	extra = binary.LittleEndian.AppendUint16(extra, uint16(pad))
	for range pad {
		extra = append(extra, 'Z')
	}
	return extra
}

func min32(v uint64) uint32 {
	if v >= u32max {
		return u32max
	}
	return uint32(v)
}

func localHeader(name string, extra []byte) []byte {
	h := make([]byte, 0, localHdrLen+len(name)+len(extra))
	h = binary.LittleEndian.AppendUint32(h, sigLocal)
	h = binary.LittleEndian.AppendUint16(h, 0) // version needed
	h = binary.LittleEndian.AppendUint16(h, flags)
	h = append(h, make([]byte, 18)...) // method stored, time, date, CRC and sizes: in the data descriptor
	h = binary.LittleEndian.AppendUint16(h, uint16(len(name)))
	h = binary.LittleEndian.AppendUint16(h, uint16(len(extra)))
	h = append(h, name...)
	return append(h, extra...)
}

// record writes one stored record of size bytes produced by data, which must
// write exactly size bytes, followed by its data descriptor (CRC-32 and
// sizes, 64-bit when the record needs ZIP64).
func (z *zipWriter) record(name string, size uint64, data func(io.Writer) error) error {
	if len(name) > math.MaxUint16 {
		return fmt.Errorf("record name %.40q… too long", name)
	}
	off := z.pos
	extra := z.localExtra(len(name), size)
	if err := z.write(localHeader(name, extra)); err != nil {
		return err
	}
	cw := &crcWriter{z: z}
	if err := data(cw); err != nil {
		return err
	}
	if cw.n != size {
		return fmt.Errorf("record %s: wrote %d bytes, want %d", name, cw.n, size)
	}
	d := binary.LittleEndian.AppendUint32(nil, sigDescriptor)
	d = binary.LittleEndian.AppendUint32(d, cw.crc)
	if size >= u32max || off >= u32max {
		d = binary.LittleEndian.AppendUint64(d, size)
		d = binary.LittleEndian.AppendUint64(d, size)
	} else {
		d = binary.LittleEndian.AppendUint32(d, uint32(size))
		d = binary.LittleEndian.AppendUint32(d, uint32(size))
	}
	if err := z.write(d); err != nil {
		return err
	}
	z.entries = append(z.entries, zipEntry{name: name, offset: off, size: size, crc: cw.crc})
	return nil
}

type crcWriter struct {
	z   *zipWriter
	crc uint32
	n   uint64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	c.crc = crc32.Update(c.crc, crc32.IEEETable, p)
	c.n += uint64(len(p))
	return len(p), c.z.write(p)
}

// close writes the central directory and the ZIP64 and classic end records.
func (z *zipWriter) close() error {
	cdStart := z.pos
	for _, e := range z.entries {
		var f []byte
		if e.size >= u32max {
			f = binary.LittleEndian.AppendUint64(f, e.size)
			f = binary.LittleEndian.AppendUint64(f, e.size)
		}
		if e.offset >= u32max {
			f = binary.LittleEndian.AppendUint64(f, e.offset)
		}
		var extra []byte
		if len(f) > 0 {
			extra = binary.LittleEndian.AppendUint16(extra, 1)
			extra = binary.LittleEndian.AppendUint16(extra, uint16(len(f)))
			extra = append(extra, f...)
		}
		h := make([]byte, 0, centralHdrLen+len(e.name)+len(extra))
		h = binary.LittleEndian.AppendUint32(h, sigCentral)
		h = binary.LittleEndian.AppendUint16(h, 0) // version made by
		h = binary.LittleEndian.AppendUint16(h, 0) // version needed
		h = binary.LittleEndian.AppendUint16(h, flags)
		h = binary.LittleEndian.AppendUint16(h, 0) // method
		h = binary.LittleEndian.AppendUint16(h, 0) // time
		h = binary.LittleEndian.AppendUint16(h, 0) // date
		h = binary.LittleEndian.AppendUint32(h, e.crc)
		h = binary.LittleEndian.AppendUint32(h, min32(e.size))
		h = binary.LittleEndian.AppendUint32(h, min32(e.size))
		h = binary.LittleEndian.AppendUint16(h, uint16(len(e.name)))
		h = binary.LittleEndian.AppendUint16(h, uint16(len(extra)))
		h = binary.LittleEndian.AppendUint16(h, 0) // comment
		h = binary.LittleEndian.AppendUint16(h, 0) // disk
		h = binary.LittleEndian.AppendUint16(h, 0) // internal attrs
		h = binary.LittleEndian.AppendUint32(h, 0) // external attrs
		h = binary.LittleEndian.AppendUint32(h, min32(e.offset))
		h = append(h, e.name...)
		h = append(h, extra...)
		if err := z.write(h); err != nil {
			return err
		}
	}
	cdSize := z.pos - cdStart
	end64At := z.pos
	n := uint64(len(z.entries))
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, sigEnd64)
	b = binary.LittleEndian.AppendUint64(b, end64Len-12)
	b = binary.LittleEndian.AppendUint16(b, 0x031e) // made by
	b = binary.LittleEndian.AppendUint16(b, 0x002d) // needed: 4.5
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, n)
	b = binary.LittleEndian.AppendUint64(b, n)
	b = binary.LittleEndian.AppendUint64(b, cdSize)
	b = binary.LittleEndian.AppendUint64(b, cdStart)
	b = binary.LittleEndian.AppendUint32(b, sigEnd64Loc)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint64(b, end64At)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, sigEnd)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(min(n, math.MaxUint16)))
	b = binary.LittleEndian.AppendUint16(b, uint16(min(n, math.MaxUint16)))
	b = binary.LittleEndian.AppendUint32(b, min32(cdSize))
	b = binary.LittleEndian.AppendUint32(b, min32(cdStart))
	b = binary.LittleEndian.AppendUint16(b, 0)
	return z.write(b)
}

// ErrFormat is wrapped by every error about a malformed archive or pickle.
var ErrFormat = errors.New("not a PyTorch zip checkpoint")

// zipRecord is one stored record found by readZip.
type zipRecord struct {
	name      string
	dataStart uint64
	size      uint64
	crc       uint32
}

// maxRecords bounds the central directory (a state dict of the largest
// models has a few thousand tensors).
const maxRecords = 1 << 20

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
}

// readZip reads the central directory of the archive r (size bytes) and
// returns its records in directory order. Only stored (uncompressed) records
// are accepted; every offset is checked against size.
func readZip(r io.ReaderAt, size int64) ([]zipRecord, error) {
	if size < endLen {
		return nil, formatErr("%d bytes is too short for a zip archive", size)
	}
	tail := min(size, endLen+math.MaxUint16)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return nil, err
	}
	at := -1
	for i := len(buf) - endLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == sigEnd {
			at = i
			break
		}
	}
	if at < 0 {
		return nil, formatErr("no zip end-of-central-directory record")
	}
	e := buf[at:]
	endOff := uint64(size-tail) + uint64(at)
	count := uint64(binary.LittleEndian.Uint16(e[10:]))
	cdSize := uint64(binary.LittleEndian.Uint32(e[12:]))
	cdStart := uint64(binary.LittleEndian.Uint32(e[16:]))
	if endOff >= end64LocLen {
		loc := make([]byte, end64LocLen)
		if _, err := r.ReadAt(loc, int64(endOff-end64LocLen)); err != nil {
			return nil, err
		}
		if binary.LittleEndian.Uint32(loc) == sigEnd64Loc {
			e64At := binary.LittleEndian.Uint64(loc[8:])
			if e64At > uint64(size)-end64Len || e64At > endOff {
				return nil, formatErr("zip64 end record offset %d out of range", e64At)
			}
			e64 := make([]byte, end64Len)
			if _, err := r.ReadAt(e64, int64(e64At)); err != nil {
				return nil, err
			}
			if binary.LittleEndian.Uint32(e64) != sigEnd64 {
				return nil, formatErr("bad zip64 end record signature")
			}
			count = binary.LittleEndian.Uint64(e64[32:])
			cdSize = binary.LittleEndian.Uint64(e64[40:])
			cdStart = binary.LittleEndian.Uint64(e64[48:])
		}
	}
	if count > maxRecords {
		return nil, formatErr("%d zip records (limit %d)", count, maxRecords)
	}
	if cdStart > uint64(size) || cdSize > uint64(size)-cdStart || cdSize < count*centralHdrLen {
		return nil, formatErr("central directory (offset %d, %d bytes, %d records) does not fit the %d-byte file", cdStart, cdSize, count, size)
	}
	cd := make([]byte, cdSize)
	if _, err := r.ReadAt(cd, int64(cdStart)); err != nil {
		return nil, err
	}
	recs := make([]zipRecord, 0, count)
	p := cd
	for i := uint64(0); i < count; i++ {
		if len(p) < centralHdrLen || binary.LittleEndian.Uint32(p) != sigCentral {
			return nil, formatErr("central directory entry %d: bad signature", i)
		}
		method := binary.LittleEndian.Uint16(p[10:])
		crc := binary.LittleEndian.Uint32(p[16:])
		csize := uint64(binary.LittleEndian.Uint32(p[20:]))
		usize := uint64(binary.LittleEndian.Uint32(p[24:]))
		nameLen := int(binary.LittleEndian.Uint16(p[28:]))
		extraLen := int(binary.LittleEndian.Uint16(p[30:]))
		commentLen := int(binary.LittleEndian.Uint16(p[32:]))
		off := uint64(binary.LittleEndian.Uint32(p[42:]))
		if len(p) < centralHdrLen+nameLen+extraLen+commentLen {
			return nil, formatErr("central directory entry %d: truncated", i)
		}
		name := string(p[centralHdrLen : centralHdrLen+nameLen])
		extra := p[centralHdrLen+nameLen : centralHdrLen+nameLen+extraLen]
		for len(extra) >= 4 {
			id, n := binary.LittleEndian.Uint16(extra), int(binary.LittleEndian.Uint16(extra[2:]))
			if n > len(extra)-4 {
				break
			}
			f := extra[4 : 4+n]
			if id == 1 {
				take := func(v *uint64) {
					if *v == u32max && len(f) >= 8 {
						*v = binary.LittleEndian.Uint64(f)
						f = f[8:]
					}
				}
				take(&usize)
				take(&csize)
				take(&off)
			}
			extra = extra[4+n:]
		}
		p = p[centralHdrLen+nameLen+extraLen+commentLen:]
		if method != 0 || csize != usize {
			return nil, formatErr("record %s is compressed (method %d); PyTorch checkpoints store records uncompressed", name, method)
		}
		if off > uint64(size)-localHdrLen {
			return nil, formatErr("record %s: local header offset %d beyond the file", name, off)
		}
		lh := make([]byte, localHdrLen)
		if _, err := r.ReadAt(lh, int64(off)); err != nil {
			return nil, err
		}
		if binary.LittleEndian.Uint32(lh) != sigLocal {
			return nil, formatErr("record %s: bad local header signature", name)
		}
		start := off + localHdrLen + uint64(binary.LittleEndian.Uint16(lh[26:])) + uint64(binary.LittleEndian.Uint16(lh[28:]))
		if start > uint64(size) || usize > uint64(size)-start {
			return nil, formatErr("record %s: %d bytes at offset %d do not fit the %d-byte file", name, usize, start, size)
		}
		recs = append(recs, zipRecord{name: name, dataStart: start, size: usize, crc: crc})
	}
	return recs, nil
}
