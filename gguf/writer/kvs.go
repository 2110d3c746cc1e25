package writer

import (
	"fmt"

	"github.com/bitnet-convert/bitnet-convert/gguf"
)

// KVs builds an ordered GGUF metadata list. Add rejects a key that is
// already present at the moment it is added, so a converter that emits
// general.architecture twice fails at the faulty line rather than producing a
// file the loader refuses (BR-27; llama.cpp PR #4062). The zero value is
// ready to use.
type KVs struct {
	list  []gguf.KV
	index map[string]int
}

// Add appends key = v. Errors: gguf.ErrDuplicateKey when key is already
// present, gguf.ErrValueType when v cannot be encoded (see CheckValue), and
// an empty key; each names the key.
func (k *KVs) Add(key string, v gguf.Value) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("gguf kv %q: %w", key, err)
	}
	if _, dup := k.index[key]; dup {
		return fmt.Errorf("gguf kv %q: %w", key, gguf.ErrDuplicateKey)
	}
	if err := CheckValue(v); err != nil {
		return fmt.Errorf("gguf kv %q: %w", key, err)
	}
	if k.index == nil {
		k.index = make(map[string]int)
	}
	k.index[key] = len(k.list)
	k.list = append(k.list, gguf.KV{Key: key, Value: v})
	return nil
}

// Set replaces the value of key in place (keeping its position), or appends
// key when absent; --metadata overrides use it. Errors as for Add, except
// that a present key is not one.
func (k *KVs) Set(key string, v gguf.Value) error {
	if i, ok := k.index[key]; ok {
		if err := CheckValue(v); err != nil {
			return fmt.Errorf("gguf kv %q: %w", key, err)
		}
		k.list[i].Value = v
		return nil
	}
	return k.Add(key, v)
}

// Get returns the value of key and whether it is present.
func (k *KVs) Get(key string) (gguf.Value, bool) {
	i, ok := k.index[key]
	if !ok {
		return gguf.Value{}, false
	}
	return k.list[i].Value, true
}

// Len returns the number of keys.
func (k *KVs) Len() int { return len(k.list) }

// List returns the KVs in insertion order (a copy of the list; the values'
// slices are shared).
func (k *KVs) List() []gguf.KV { return append([]gguf.KV(nil), k.list...) }
