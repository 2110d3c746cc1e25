package torchpt

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Pickle opcodes used by torch.save (protocol 2; CPython Lib/pickle.py).
const (
	opProto           = 0x80
	opEmptyDict       = '}'
	opBinPut          = 'q'
	opLongBinPut      = 'r'
	opBinGet          = 'h'
	opLongBinGet      = 'j'
	opMark            = '('
	opBinUnicode      = 'X'
	opGlobal          = 'c'
	opTuple           = 't'
	opTuple1          = 0x85
	opTuple2          = 0x86
	opTuple3          = 0x87
	opEmptyTuple      = ')'
	opBinPersID       = 'Q'
	opBinInt          = 'J'
	opBinInt1         = 'K'
	opBinInt2         = 'M'
	opLong1           = 0x8a
	opNewFalse        = 0x89
	opNewTrue         = 0x88
	opNone            = 'N'
	opReduce          = 'R'
	opSetItem         = 's'
	opSetItems        = 'u'
	opStop            = '.'
	opBinFloat        = 'G'
	opShortBinUnicode = 0x8c
	opMemoize         = 0x94
	opFrame           = 0x95
	opStackGlobal     = 0x93
	opEmptyList       = ']'
	opBinString       = 'T'
	opShortBinString  = 'U'
	opDict            = 'd'
)

// pickler emits CPython's protocol-2 byte sequence for the objects of a
// state dict, numbering memo entries as CPython's C pickler does (every
// str, tuple, global and reduced object is memoized once; a repeated
// object — the same global, the constant strings 'storage' and 'cpu' — is
// a BINGET).
type pickler struct {
	b    []byte
	memo int
	// seen maps an object identity (global name or constant string) to its
	// memo index.
	seen map[string]int
}

func (p *pickler) put() {
	if p.memo < 256 {
		p.b = append(p.b, opBinPut, byte(p.memo))
	} else {
		p.b = append(p.b, opLongBinPut)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(p.memo))
	}
	p.memo++
}

func (p *pickler) get(i int) {
	if i < 256 {
		p.b = append(p.b, opBinGet, byte(i))
	} else {
		p.b = append(p.b, opLongBinGet)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(i))
	}
}

// str writes a fresh str object (memoized).
func (p *pickler) str(s string) {
	p.b = append(p.b, opBinUnicode)
	p.b = binary.LittleEndian.AppendUint32(p.b, uint32(len(s)))
	p.b = append(p.b, s...)
	p.put()
}

// shared writes an object that is the same Python object every time it
// occurs (id is its identity): the first time by emit, then by BINGET.
func (p *pickler) shared(id string, emit func()) {
	if i, ok := p.seen[id]; ok {
		p.get(i)
		return
	}
	emit()
	p.seen[id] = p.memo - 1
}

func (p *pickler) global(module, name string) {
	p.shared("global "+module+"."+name, func() {
		p.b = append(p.b, opGlobal)
		p.b = append(p.b, module+"\n"+name+"\n"...)
		p.put()
	})
}

func (p *pickler) int(v int64) {
	switch {
	case v >= 0 && v < 256:
		p.b = append(p.b, opBinInt1, byte(v))
	case v >= 0 && v < 65536:
		p.b = append(p.b, opBinInt2)
		p.b = binary.LittleEndian.AppendUint16(p.b, uint16(v))
	case v >= math.MinInt32 && v <= math.MaxInt32:
		p.b = append(p.b, opBinInt)
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(int32(v)))
	default:
		// LONG1: little-endian two's complement, shortest form.
		var enc []byte
		for x := v; ; x >>= 8 {
			enc = append(enc, byte(x))
			if (x >= -128 && x < 128) && (x >= 0) == (byte(x)&0x80 == 0) {
				break
			}
		}
		p.b = append(p.b, opLong1, byte(len(enc)))
		p.b = append(p.b, enc...)
	}
}

// intTuple writes a tuple of ints (memoized unless empty).
func (p *pickler) intTuple(v []int64) {
	if len(v) == 0 {
		p.b = append(p.b, opEmptyTuple)
		return
	}
	if len(v) > 3 {
		p.b = append(p.b, opMark)
	}
	for _, x := range v {
		p.int(x)
	}
	switch len(v) {
	case 1:
		p.b = append(p.b, opTuple1)
	case 2:
		p.b = append(p.b, opTuple2)
	case 3:
		p.b = append(p.b, opTuple3)
	default:
		p.b = append(p.b, opTuple)
	}
	p.put()
}

// tensor writes torch's reduction of a contiguous CPU tensor whose storage
// has the given key and element count.
func (p *pickler) tensor(t *Tensor, key string) {
	p.global("torch._utils", "_rebuild_tensor_v2")
	p.b = append(p.b, opMark)
	// persistent id ('storage', torch.XStorage, key, 'cpu', numel)
	p.b = append(p.b, opMark)
	p.shared("str storage", func() { p.str("storage") })
	p.global("torch", t.DType.storage)
	p.str(key)
	p.shared("str cpu", func() { p.str("cpu") })
	p.int(t.NumElements())
	p.b = append(p.b, opTuple)
	p.put()
	p.b = append(p.b, opBinPersID)
	p.int(0) // storage offset
	p.intTuple(t.Shape)
	p.intTuple(contiguousStrides(t.Shape))
	p.b = append(p.b, opNewFalse) // requires_grad
	p.global("collections", "OrderedDict")
	p.b = append(p.b, opEmptyTuple, opReduce)
	p.put()
	p.b = append(p.b, opTuple)
	p.put()
	p.b = append(p.b, opReduce)
	p.put()
}

// pickleStateDict returns the data.pkl bytes of a dict name → tensor, the
// storage of tensor i having key strconv.Itoa(i).
func pickleStateDict(ts []Tensor) []byte {
	p := &pickler{seen: map[string]int{}}
	p.b = append(p.b, opProto, 2, opEmptyDict)
	p.put()
	// CPython's _batch_setitems: batches of 1000; a batch of one item is a
	// SETITEM without MARK.
	for lo := 0; lo < len(ts); lo += 1000 {
		hi := min(lo+1000, len(ts))
		if hi-lo > 1 {
			p.b = append(p.b, opMark)
		}
		for i := lo; i < hi; i++ {
			p.str(ts[i].Name)
			p.tensor(&ts[i], fmt.Sprint(i))
		}
		if hi-lo > 1 {
			p.b = append(p.b, opSetItems)
		} else {
			p.b = append(p.b, opSetItem)
		}
	}
	return append(p.b, opStop)
}

func contiguousStrides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}
