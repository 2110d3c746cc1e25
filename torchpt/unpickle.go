package torchpt

import (
	"encoding/binary"
	"math"
	"strings"
)

// Objects of the pickle subset the reader understands.
type (
	pyGlobal struct{ module, name string }
	pyTuple  []any
	pyDict   struct {
		keys []any
		vals []any
	}
	pyStorage struct {
		dtype DType
		key   string
		numel int64
	}
	pyTensor struct {
		storage pyStorage
		offset  int64
		shape   []int64
		stride  []int64
	}
	pyNone struct{}
)

// Limits of the unpickler (a state dict's pickle is a few hundred kB).
const (
	maxPickleStack = 1 << 16
	maxPickleMemo  = 1 << 20
	maxDims        = 16
)

// unpickle runs the pickle program data and returns its result. Only the
// opcodes and globals a state dict of tensors needs are accepted.
func unpickle(data []byte) (any, error) {
	var (
		stack []any
		marks []int
		memo  = map[uint32]any{}
		pos   int
	)
	fail := func(format string, args ...any) (any, error) {
		return nil, formatErr("data.pkl byte %d: "+format, append([]any{pos}, args...)...)
	}
	need := func(n int) ([]byte, bool) {
		if n < 0 || n > len(data)-pos {
			return nil, false
		}
		b := data[pos : pos+n]
		pos += n
		return b, true
	}
	pop := func() (any, bool) {
		if len(stack) == 0 || (len(marks) > 0 && marks[len(marks)-1] == len(stack)) {
			return nil, false
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return v, true
	}
	popMark := func() ([]any, bool) {
		if len(marks) == 0 {
			return nil, false
		}
		m := marks[len(marks)-1]
		marks = marks[:len(marks)-1]
		items := append([]any(nil), stack[m:]...)
		stack = stack[:m]
		return items, true
	}
	for {
		if len(stack) > maxPickleStack || len(memo) > maxPickleMemo {
			return fail("stack or memo too large")
		}
		opAt := pos
		b, ok := need(1)
		if !ok {
			return fail("truncated (no STOP)")
		}
		op := b[0]
		switch op {
		case opProto:
			v, ok := need(1)
			if !ok || v[0] > 5 {
				return fail("bad PROTO")
			}
		case opFrame:
			if _, ok := need(8); !ok {
				return fail("truncated FRAME")
			}
		case opStop:
			if len(stack) != 1 || len(marks) != 0 {
				return fail("STOP with %d objects on the stack", len(stack))
			}
			return stack[0], nil
		case opMark:
			marks = append(marks, len(stack))
		case opEmptyDict:
			stack = append(stack, &pyDict{})
		case opEmptyTuple:
			stack = append(stack, pyTuple{})
		case opEmptyList:
			stack = append(stack, &[]any{})
		case opNone:
			stack = append(stack, pyNone{})
		case opNewTrue, opNewFalse:
			stack = append(stack, op == opNewTrue)
		case opBinPut, opLongBinPut, opMemoize:
			var idx uint32
			switch op {
			case opBinPut:
				v, ok := need(1)
				if !ok {
					return fail("truncated BINPUT")
				}
				idx = uint32(v[0])
			case opLongBinPut:
				v, ok := need(4)
				if !ok {
					return fail("truncated LONG_BINPUT")
				}
				idx = binary.LittleEndian.Uint32(v)
			default:
				idx = uint32(len(memo))
			}
			if len(stack) == 0 {
				return fail("PUT on an empty stack")
			}
			memo[idx] = stack[len(stack)-1]
		case opBinGet, opLongBinGet:
			var idx uint32
			if op == opBinGet {
				v, ok := need(1)
				if !ok {
					return fail("truncated BINGET")
				}
				idx = uint32(v[0])
			} else {
				v, ok := need(4)
				if !ok {
					return fail("truncated LONG_BINGET")
				}
				idx = binary.LittleEndian.Uint32(v)
			}
			v, ok := memo[idx]
			if !ok {
				return fail("GET of memo %d, never PUT", idx)
			}
			stack = append(stack, v)
		case opBinUnicode, opShortBinUnicode, opBinString, opShortBinString:
			var n int
			if op == opBinUnicode || op == opBinString {
				v, ok := need(4)
				if !ok {
					return fail("truncated string length")
				}
				n = int(binary.LittleEndian.Uint32(v))
			} else {
				v, ok := need(1)
				if !ok {
					return fail("truncated string length")
				}
				n = int(v[0])
			}
			s, ok := need(n)
			if !ok {
				return fail("string of %d bytes past the end", n)
			}
			stack = append(stack, string(s))
		case opBinInt1:
			v, ok := need(1)
			if !ok {
				return fail("truncated BININT1")
			}
			stack = append(stack, int64(v[0]))
		case opBinInt2:
			v, ok := need(2)
			if !ok {
				return fail("truncated BININT2")
			}
			stack = append(stack, int64(binary.LittleEndian.Uint16(v)))
		case opBinInt:
			v, ok := need(4)
			if !ok {
				return fail("truncated BININT")
			}
			stack = append(stack, int64(int32(binary.LittleEndian.Uint32(v))))
		case opLong1:
			n, ok := need(1)
			if !ok || n[0] > 8 {
				return fail("LONG1 wider than 64 bits")
			}
			v, ok := need(int(n[0]))
			if !ok {
				return fail("truncated LONG1")
			}
			var x int64
			for i := len(v) - 1; i >= 0; i-- {
				x = x<<8 | int64(v[i])
			}
			if len(v) > 0 && len(v) < 8 && v[len(v)-1]&0x80 != 0 {
				x -= 1 << (8 * len(v))
			}
			stack = append(stack, x)
		case opBinFloat:
			v, ok := need(8)
			if !ok {
				return fail("truncated BINFLOAT")
			}
			stack = append(stack, math.Float64frombits(binary.BigEndian.Uint64(v)))
		case opGlobal:
			i := strings.IndexByte(string(data[pos:min(len(data), pos+512)]), '\n')
			if i < 0 {
				return fail("GLOBAL without a module line")
			}
			module := string(data[pos : pos+i])
			pos += i + 1
			j := strings.IndexByte(string(data[pos:min(len(data), pos+512)]), '\n')
			if j < 0 {
				return fail("GLOBAL without a name line")
			}
			name := string(data[pos : pos+j])
			pos += j + 1
			g, err := allowedGlobal(module, name)
			if err != nil {
				pos = opAt
				return fail("%v", err)
			}
			stack = append(stack, g)
		case opStackGlobal:
			n, ok1 := pop()
			m, ok2 := pop()
			ns, ok3 := n.(string)
			ms, ok4 := m.(string)
			if !ok1 || !ok2 || !ok3 || !ok4 {
				return fail("STACK_GLOBAL without two strings")
			}
			g, err := allowedGlobal(ms, ns)
			if err != nil {
				return fail("%v", err)
			}
			stack = append(stack, g)
		case opTuple:
			items, ok := popMark()
			if !ok {
				return fail("TUPLE without MARK")
			}
			stack = append(stack, pyTuple(items))
		case opTuple1, opTuple2, opTuple3:
			n := int(op-opTuple1) + 1
			if len(stack) < n || (len(marks) > 0 && len(stack)-marks[len(marks)-1] < n) {
				return fail("TUPLE%d with too few objects", n)
			}
			t := append(pyTuple(nil), stack[len(stack)-n:]...)
			stack = append(stack[:len(stack)-n], t)
		case opBinPersID:
			pid, ok := pop()
			if !ok {
				return fail("BINPERSID on an empty stack")
			}
			st, err := persistentStorage(pid)
			if err != nil {
				return fail("%v", err)
			}
			stack = append(stack, st)
		case opReduce:
			args, ok1 := pop()
			fn, ok2 := pop()
			if !ok1 || !ok2 {
				return fail("REDUCE with too few objects")
			}
			v, err := reduce(fn, args)
			if err != nil {
				return fail("%v", err)
			}
			stack = append(stack, v)
		case opSetItem, opSetItems:
			var items []any
			if op == opSetItem {
				v, ok1 := pop()
				k, ok2 := pop()
				if !ok1 || !ok2 {
					return fail("SETITEM with too few objects")
				}
				items = []any{k, v}
			} else {
				var ok bool
				if items, ok = popMark(); !ok {
					return fail("SETITEMS without MARK")
				}
			}
			if len(items)%2 != 0 || len(stack) == 0 {
				return fail("SETITEMS with an odd number of objects")
			}
			d, ok := stack[len(stack)-1].(*pyDict)
			if !ok {
				return fail("SETITEMS on a %T, not a dict", stack[len(stack)-1])
			}
			for i := 0; i < len(items); i += 2 {
				d.keys = append(d.keys, items[i])
				d.vals = append(d.vals, items[i+1])
			}
		case opDict:
			items, ok := popMark()
			if !ok || len(items)%2 != 0 {
				return fail("DICT without MARK or with an odd number of objects")
			}
			d := &pyDict{}
			for i := 0; i < len(items); i += 2 {
				d.keys = append(d.keys, items[i])
				d.vals = append(d.vals, items[i+1])
			}
			stack = append(stack, d)
		default:
			return fail("opcode 0x%02x is not in the state-dict subset this reader accepts", op)
		}
	}
}

// allowedGlobal resolves the globals of a weights-only state dict.
func allowedGlobal(module, name string) (any, error) {
	switch {
	case module == "torch._utils" && name == "_rebuild_tensor_v2",
		module == "collections" && name == "OrderedDict":
		return pyGlobal{module, name}, nil
	case module == "torch":
		if dt, ok := dtypeByStorage(name); ok {
			return dt, nil
		}
	}
	return nil, formatErr("global %s.%s is not allowed (only tensors, storages and OrderedDict)", module, name)
}

// persistentStorage decodes torch's ('storage', type, key, location, numel).
func persistentStorage(pid any) (pyStorage, error) {
	t, ok := pid.(pyTuple)
	if !ok || len(t) != 5 {
		return pyStorage{}, formatErr("persistent id is not a 5-tuple")
	}
	tag, _ := t[0].(string)
	dt, ok1 := t[1].(DType)
	key, ok2 := t[2].(string)
	numel, ok3 := t[4].(int64)
	if tag != "storage" || !ok1 || !ok2 || !ok3 || numel < 0 {
		return pyStorage{}, formatErr("persistent id is not ('storage', type, key, location, numel)")
	}
	return pyStorage{dtype: dt, key: key, numel: numel}, nil
}

func reduce(fn, args any) (any, error) {
	g, ok := fn.(pyGlobal)
	a, ok2 := args.(pyTuple)
	if !ok || !ok2 {
		return nil, formatErr("REDUCE of a %T", fn)
	}
	switch g.name {
	case "OrderedDict":
		if len(a) != 0 {
			return nil, formatErr("OrderedDict with arguments")
		}
		return &pyDict{}, nil
	case "_rebuild_tensor_v2":
		if len(a) < 6 || len(a) > 7 {
			return nil, formatErr("_rebuild_tensor_v2 with %d arguments", len(a))
		}
		st, ok1 := a[0].(pyStorage)
		off, ok2 := a[1].(int64)
		shape, ok3 := ints(a[2])
		stride, ok4 := ints(a[3])
		if !ok1 || !ok2 || !ok3 || !ok4 || len(shape) != len(stride) || off < 0 {
			return nil, formatErr("_rebuild_tensor_v2 arguments are not (storage, offset, size, stride, …)")
		}
		return &pyTensor{storage: st, offset: off, shape: shape, stride: stride}, nil
	}
	return nil, formatErr("REDUCE of %s.%s", g.module, g.name)
}

func ints(v any) ([]int64, bool) {
	t, ok := v.(pyTuple)
	if !ok || len(t) > maxDims {
		return nil, false
	}
	out := make([]int64, len(t))
	for i, x := range t {
		n, ok := x.(int64)
		if !ok || n < 0 {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}
