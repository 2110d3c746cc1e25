package hf

// ReleaseRange is Release for the bytes Raw[lo:hi] only: converters that
// stream one large tensor in chunks call it after each chunk, so even a
// single tensor's input pages do not all stay resident. Out-of-range bounds
// are clipped; errors are ignored (it is only advice).
func (d *TensorData) ReleaseRange(lo, hi int) {
	lo, hi = max(lo, 0), min(hi, len(d.Raw))
	if hi <= lo {
		return
	}
	d.mapping.Release(d.Raw[lo:hi])
}
