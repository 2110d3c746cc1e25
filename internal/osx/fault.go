package osx

import (
	"fmt"
	"sync"
	"unsafe"
)

// A file that gets shorter while it is mapped (huggingface-cli or git lfs
// rewriting it in place, the user deleting and re-creating it) makes every
// later touch of the vanished pages a SIGBUS. Go turns such a fault into a
// fatal error with a goroutine dump unless the faulting goroutine has
// debug.SetPanicOnFault(true); then it is a panic whose value has an Addr
// method. The goroutines that read mapped inputs (cli.Main's, and the
// workers of internal/parallel and format) set it, and FaultError turns the
// recovered value into one line naming the file (defect H1).

// mapped is a region handed out by Map, with the name its errors use.
type mapped struct {
	base, size uintptr
	name       string
}

// recentMaps lists the latest maxRecentMaps mappings, live or closed: by the
// time a fault's panic is recovered the unwinding has usually closed the
// mapping it hit.
var recentMaps struct {
	sync.Mutex
	list []mapped
}

const maxRecentMaps = 64

func noteMapping(data []byte, name string) {
	if len(data) == 0 {
		return
	}
	recentMaps.Lock()
	defer recentMaps.Unlock()
	if len(recentMaps.list) == maxRecentMaps {
		recentMaps.list = append(recentMaps.list[:0], recentMaps.list[1:]...)
	}
	recentMaps.list = append(recentMaps.list, mapped{uintptr(unsafe.Pointer(unsafe.SliceData(data))), uintptr(len(data)), name})
}

// FaultError returns the error for a recovered panic value p that is a
// memory fault (a runtime.Error with an Addr method, raised under
// debug.SetPanicOnFault) inside a file mapped by Map: "read NAME: … ; was
// the file changed?". It returns nil for any other value, which callers
// treat as the bug it is.
func FaultError(p any) error {
	fault, ok := p.(interface {
		error
		Addr() uintptr
		RuntimeError()
	})
	if !ok {
		return nil
	}
	addr := fault.Addr()
	recentMaps.Lock()
	defer recentMaps.Unlock()
	for i := len(recentMaps.list) - 1; i >= 0; i-- {
		m := recentMaps.list[i]
		if addr >= m.base && addr-m.base < m.size {
			return fmt.Errorf("read %s: byte %d of the mapped file is gone (it got shorter while this run read it); was the file changed?", m.name, addr-m.base)
		}
	}
	return nil
}
